// coll_reduce_ops.cpp - the coll backend's reducing operations: allreduce (+coalesced),
// reduce, reduce_scatter (+_reduce_scatter_base). Each one checks its arguments in the
// caller's thread (errors raise at the call) and queues the libcoll call.
#include "coll_pg.hpp"

#include <c10/util/Exception.h>

namespace torch_coll {

namespace {

// How an op is computed: by libcoll (op; avg: SUM, then divide by the group size), or,
// for the bitwise ops coll.h lacks, exactly by an allgather and a local fold.
enum class Fold { NONE, BAND, BOR, BXOR };
struct RedOp {
  coll_op_t op;
  bool avg;
  Fold fold;
};

const char* opName(const c10d::ReduceOp& rop)
{
  switch (rop.op_) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

// bool tensors are bytes holding 0 or 1: OR (SUM, MAX, BOR) is max, AND (PRODUCT, MIN,
// BAND) is min, as Gloo computes them. Other dtypes: what coll.h has, AVG (SUM / size)
// for floating dtypes, BAND/BOR/BXOR (allgather + fold) for integers and bool; anything
// else is refused by name.
RedOp collOp(const c10d::ReduceOp& rop, at::ScalarType st)
{
  using R = c10d::ReduceOp;
  if (st == at::kBool) {
    switch (rop.op_) {
      case R::SUM: case R::MAX: case R::BOR: return {COLL_MAX, false, Fold::NONE};
      case R::PRODUCT: case R::MIN: case R::BAND: return {COLL_MIN, false, Fold::NONE};
      case R::BXOR: return {COLL_SUM, false, Fold::BXOR};
      default: break;
    }
    TORCH_CHECK(false, "coll: ReduceOp.", opName(rop), " is not supported for bool tensors "
                "(supported: SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR)");
  }
  collDtype(st);  // refuses dtypes libcoll cannot reduce
  bool integral = at::isIntegralType(st, false);
  switch (rop.op_) {
    case R::SUM: return {COLL_SUM, false, Fold::NONE};
    case R::PRODUCT: return {COLL_PROD, false, Fold::NONE};
    case R::MIN: return {COLL_MIN, false, Fold::NONE};
    case R::MAX: return {COLL_MAX, false, Fold::NONE};
    case R::AVG:
      TORCH_CHECK(at::isFloatingType(st), "coll: ReduceOp.AVG needs a floating dtype, got ", st,
                  " (an integer average is not exact; use SUM and divide)");
      return {COLL_SUM, true, Fold::NONE};
    case R::BAND: if (integral) return {COLL_SUM, false, Fold::BAND}; break;
    case R::BOR: if (integral) return {COLL_SUM, false, Fold::BOR}; break;
    case R::BXOR: if (integral) return {COLL_SUM, false, Fold::BXOR}; break;
    default: break;
  }
  TORCH_CHECK(false, "coll: ReduceOp.", opName(rop), " is not supported for ", st,
              " (SUM, PRODUCT, MIN, MAX for every dtype, AVG for floating dtypes, BAND/BOR/BXOR for "
              "integers and bool)");
}

void checkSame(const at::Tensor& a, const at::Tensor& b, const char* op)
{
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "coll: ", op, ": tensors have different dtypes (",
              a.scalar_type(), " and ", b.scalar_type(), ")");
}

void checkOne(const std::vector<at::Tensor>& ts, const char* op)
{
  TORCH_CHECK(ts.size() == 1, "coll: ", op, ": takes exactly one tensor per process, got ", ts.size());
  checkCpuDense(ts[0], op);
}

}  // namespace

// BAND/BOR/BXOR: every rank's data by allgather, folded here in rank order (exact).
static void foldBitwise(at::Tensor& flat, const at::Tensor& all, Fold f, int size)
{
  at::Tensor acc = all[0].clone();
  for (int r = 1; r < size; r++) {
    if (f == Fold::BAND)
      acc.bitwise_and_(all[r]);
    else if (f == Fold::BOR)
      acc.bitwise_or_(all[r]);
    else
      acc.bitwise_xor_(all[r]);
  }
  flat.copy_(acc);
}

void ProcessGroupColl::allreduceFlat(at::Tensor& flat, const c10d::ReduceOp& rop)
{
  RedOp r = collOp(rop, flat.scalar_type());
  if (r.fold != Fold::NONE) {
    at::Tensor all = at::empty({size_, flat.numel()}, flat.options());
    check(coll_all_gather(flat.data_ptr(), all.data_ptr(), flat.nbytes(), COLL_UINT8, comm_), "allreduce");
    foldBitwise(flat, all, r.fold, size_);
    return;
  }
  check(coll_all_reduce(flat.data_ptr(), flat.data_ptr(), flat.numel(), collDtype(flat.scalar_type()), r.op, comm_),
        "allreduce");
  if (r.avg)
    flat.div_(size_);
}

// in: the contiguous input of size_ x out's elements; out gets this rank's block.
void ProcessGroupColl::reduceScatterFlat(const at::Tensor& in, at::Tensor& out, const c10d::ReduceOp& rop)
{
  RedOp r = collOp(rop, out.scalar_type());
  if (r.fold != Fold::NONE) {
    at::Tensor tmp = in.reshape(-1).clone();
    allreduceFlat(tmp, rop);
    out.copy_(tmp.narrow(0, rank_ * out.numel(), out.numel()).view_as(out));
    return;
  }
  at::Tensor co = out.contiguous();
  check(coll_reduce_scatter(in.data_ptr(), co.data_ptr(), co.numel(), collDtype(co.scalar_type()), r.op, comm_),
        "reduce_scatter");
  if (r.avg)
    co.div_(size_);
  if (!co.is_same(out))
    out.copy_(co);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts)
{
  checkOne(tensors, "allreduce");
  at::Tensor t = tensors[0];
  collOp(opts.reduceOp, t.scalar_type());
  c10d::ReduceOp rop = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE, "allreduce", tensors, [this, t, rop](CollWork&) mutable {
    at::Tensor c = t.contiguous();
    allreduceFlat(c, rop);
    if (!c.is_same(t))
      t.copy_(c);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                     const c10d::AllreduceCoalescedOptions& opts)
{
  TORCH_CHECK(!tensors.empty(), "coll: allreduce_coalesced: no tensors");
  for (const auto& t : tensors) {
    checkCpuDense(t, "allreduce_coalesced");
    checkSame(t, tensors[0], "allreduce_coalesced");
  }
  collOp(opts.reduceOp, tensors[0].scalar_type());
  c10d::ReduceOp rop = opts.reduceOp;
  std::vector<at::Tensor> ts = tensors;
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", ts, [this, ts, rop](CollWork&) mutable {
    at::Tensor flat = packBytes(ts).view(ts[0].scalar_type());
    allreduceFlat(flat, rop);
    unpackBytes(flat.view(at::kByte), ts);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts)
{
  checkOne(tensors, "reduce");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "coll: reduce: root ", opts.rootRank,
              " out of range 0..", size_ - 1);
  at::Tensor t = tensors[0];
  RedOp r = collOp(opts.reduceOp, t.scalar_type());
  int root = static_cast<int>(opts.rootRank);
  c10d::ReduceOp rop = opts.reduceOp;
  return enqueue(c10d::OpType::REDUCE, "reduce", tensors, [this, t, r, root, rop](CollWork&) mutable {
    at::Tensor c = t.contiguous();
    if (r.fold != Fold::NONE) {  // every rank folds; the root keeps the result
      at::Tensor tmp = c.clone();
      allreduceFlat(tmp, rop);
      if (rank_ == root)
        t.copy_(tmp);
      return;
    }
    void* out = rank_ == root ? c.data_ptr() : nullptr;
    check(coll_reduce(c.data_ptr(), out, c.numel(), collDtype(c.scalar_type()), r.op, root, comm_), "reduce");
    if (rank_ != root)
      return;
    if (r.avg)
      c.div_(size_);
    if (!c.is_same(t))
      t.copy_(c);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                      const c10d::ReduceScatterOptions& opts)
{
  checkCpuDense(output, "_reduce_scatter_base");
  checkCpuDense(input, "_reduce_scatter_base");
  checkSame(output, input, "_reduce_scatter_base");
  TORCH_CHECK(input.numel() == output.numel() * size_, "coll: _reduce_scatter_base: input has ", input.numel(),
              " elements, expected output's ", output.numel(), " x ", size_, " ranks");
  collOp(opts.reduceOp, input.scalar_type());
  at::Tensor out = output, in = input;
  c10d::ReduceOp rop = opts.reduceOp;
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter", {output}, [this, out, in, rop](CollWork&) mutable {
    reduceScatterFlat(in.contiguous(), out, rop);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                                const c10d::ReduceScatterOptions& opts)
{
  checkOne(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_),
              "coll: reduce_scatter: needs one list of ", size_, " input tensors");
  at::Tensor out = outputs[0];
  for (const auto& t : inputs[0]) {
    checkCpuDense(t, "reduce_scatter");
    checkSame(t, out, "reduce_scatter");
    TORCH_CHECK(t.numel() == out.numel(), "coll: reduce_scatter: an input has ", t.numel(),
                " elements, the output ", out.numel());
  }
  collOp(opts.reduceOp, out.scalar_type());
  std::vector<at::Tensor> ins = inputs[0];
  c10d::ReduceOp rop = opts.reduceOp;
  return enqueue(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", outputs, [this, out, ins, rop](CollWork&) mutable {
    reduceScatterFlat(packBytes(ins).view(out.scalar_type()), out, rop);
  });
}

}  // namespace torch_coll
