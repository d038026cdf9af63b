// coll_tensor.cpp - dtype mapping, reduce-op mapping and byte packing for the coll backend.
#include "coll_pg.hpp"

#include <c10/util/Exception.h>

#include <cstring>

namespace torch_coll {

coll_dtype_t collDtype(at::ScalarType st)
{
  switch (st) {
    case at::kFloat: return COLL_FP32;
    case at::kDouble: return COLL_FP64;
    case at::kHalf: return COLL_FP16;
    case at::kBFloat16: return COLL_BF16;
    case at::kChar: return COLL_INT8;
    case at::kByte: return COLL_UINT8;
    case at::kShort: return COLL_INT16;
    case at::kInt: return COLL_INT32;
    case at::kLong: return COLL_INT64;
    case at::kBool: return COLL_UINT8;  // 0/1 bytes: sum/prod map to max/min (see collOp)
    default:
      TORCH_CHECK(false, "coll: dtype ", st, " cannot be reduced by libcoll (reductions support float32, float64, "
                  "float16, bfloat16, int8, uint8, int16, int32, int64, bool; data movement supports every dtype)");
  }
}

void checkCpuDense(const at::Tensor& t, const char* op)
{
  TORCH_CHECK(t.defined(), "coll: ", op, ": undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "coll: ", op, ": tensor on ", t.device(),
              "; the coll backend works on CPU tensors only");
  TORCH_CHECK(t.layout() == at::kStrided, "coll: ", op, ": ", t.layout(),
              " tensors are not supported (only dense strided tensors)");
}

at::Tensor packBytes(const std::vector<at::Tensor>& ts)
{
  int64_t total = 0;
  for (const auto& t : ts)
    total += static_cast<int64_t>(t.nbytes());
  at::Tensor flat = at::empty({total}, at::TensorOptions().dtype(at::kByte));
  uint8_t* p = flat.data_ptr<uint8_t>();
  for (const auto& t : ts) {
    at::Tensor c = t.contiguous();
    if (c.nbytes())
      std::memcpy(p, c.data_ptr(), c.nbytes());
    p += c.nbytes();
  }
  return flat;
}

void unpackBytes(const at::Tensor& flat, std::vector<at::Tensor>& ts)
{
  const uint8_t* p = flat.data_ptr<uint8_t>();
  for (auto& t : ts) {
    size_t nb = t.nbytes();
    if (t.is_contiguous()) {
      if (nb)
        std::memcpy(t.data_ptr(), p, nb);
    } else {
      at::Tensor tmp = at::empty(t.sizes(), t.options());
      if (nb)
        std::memcpy(tmp.data_ptr(), p, nb);
      t.copy_(tmp);
    }
    p += nb;
  }
}

}  // namespace torch_coll
