// coll_move_ops.cpp - the coll backend's data-movement operations: broadcast,
// allgather (+_allgather_base, coalesced), gather, scatter, alltoall (+alltoall_base)
// and barrier. They move bytes (COLL_UINT8), so every torch dtype works.
#include "coll_pg.hpp"

#include <c10/util/Exception.h>

namespace torch_coll {

namespace {

void checkList(const std::vector<at::Tensor>& ts, const at::Tensor& like, size_t n, const char* op)
{
  TORCH_CHECK(ts.size() == n, "coll: ", op, ": needs a list of ", n, " tensors, got ", ts.size());
  for (const auto& t : ts) {
    checkCpuDense(t, op);
    TORCH_CHECK(t.scalar_type() == like.scalar_type() && t.numel() == like.numel(), "coll: ", op,
                ": every tensor of the list must have the dtype and size of the input (", like.scalar_type(), ", ",
                like.numel(), " elements), got ", t.scalar_type(), ", ", t.numel());
  }
}

void checkRoot(int64_t root, int size, const char* op)
{
  TORCH_CHECK(root >= 0 && root < size, "coll: ", op, ": root ", root, " out of range 0..", size - 1);
}

// Byte counts and displacements of dim-0 splits (empty splits: equal parts).
void splitBytes(const at::Tensor& t, const std::vector<int64_t>& splits, int size, std::vector<size_t>& counts,
                std::vector<size_t>& displs, const char* which)
{
  int64_t rows = t.dim() ? t.size(0) : 0;
  int64_t rowBytes = rows ? static_cast<int64_t>(t.nbytes()) / rows : 0;
  counts.assign(size, 0);
  displs.assign(size, 0);
  int64_t sum = 0;
  for (int i = 0; i < size; i++) {
    int64_t s = splits.empty() ? rows / size : splits[i];
    TORCH_CHECK(s >= 0, "coll: alltoall_base: negative ", which, " split size ", s);
    counts[i] = static_cast<size_t>(s * rowBytes);
    displs[i] = static_cast<size_t>(sum * rowBytes);
    sum += s;
  }
  TORCH_CHECK(splits.empty() || splits.size() == static_cast<size_t>(size), "coll: alltoall_base: ", which,
              " split sizes have ", splits.size(), " entries, expected ", size);
  TORCH_CHECK(sum == rows, "coll: alltoall_base: ", which, " split sizes add up to ", sum, ", the tensor has ", rows,
              " rows (dim 0)", splits.empty() ? " (not divisible by the group size)" : "");
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts)
{
  TORCH_CHECK(tensors.size() == 1, "coll: broadcast: takes exactly one tensor per process, got ", tensors.size());
  checkCpuDense(tensors[0], "broadcast");
  checkRoot(opts.rootRank, size_, "broadcast");
  at::Tensor t = tensors[0];
  int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::BROADCAST, "broadcast", tensors, [this, t, root](CollWork&) mutable {
    at::Tensor c = t.contiguous();
    check(coll_broadcast(c.data_ptr(), c.nbytes(), COLL_UINT8, root, comm_), "broadcast");
    if (!c.is_same(t))
      t.copy_(c);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::AllgatherOptions&)
{
  checkCpuDense(output, "_allgather_base");
  checkCpuDense(input, "_allgather_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type() && output.numel() == input.numel() * size_,
              "coll: _allgather_base: output must be ", size_, " x the input (", input.scalar_type(), ", ",
              input.numel(), " elements), got ", output.scalar_type(), ", ", output.numel());
  at::Tensor out = output, in = input;
  return enqueue(c10d::OpType::_ALLGATHER_BASE, "allgather", {output}, [this, out, in](CollWork&) mutable {
    at::Tensor ci = in.contiguous(), co = out.contiguous();
    check(coll_all_gather(ci.data_ptr(), co.data_ptr(), ci.nbytes(), COLL_UINT8, comm_), "allgather");
    if (!co.is_same(out))
      out.copy_(co);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& opts)
{
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1, "coll: allgather: takes one input tensor and one output "
              "list per process");
  checkCpuDense(inputs[0], "allgather");
  checkList(outputs[0], inputs[0], size_, "allgather");
  return allgather_coalesced(outputs, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                                                                     std::vector<at::Tensor>& inputs,
                                                                     const c10d::AllgatherOptions&)
{
  TORCH_CHECK(outputLists.size() == inputs.size(), "coll: allgather_coalesced: ", inputs.size(),
              " inputs but ", outputLists.size(), " output lists");
  for (size_t i = 0; i < inputs.size(); i++) {
    checkCpuDense(inputs[i], "allgather_coalesced");
    checkList(outputLists[i], inputs[i], size_, "allgather_coalesced");
  }
  std::vector<at::Tensor> ins = inputs, outs;  // outs: rank-major (rank 0's list, then rank 1's...)
  for (int r = 0; r < size_; r++)
    for (auto& l : outputLists)
      outs.push_back(l[r]);
  return enqueue(c10d::OpType::ALLGATHER_COALESCED, "allgather", outs, [this, ins, outs](CollWork&) mutable {
    at::Tensor in = packBytes(ins);
    at::Tensor flat = at::empty({in.numel() * size_}, in.options());
    check(coll_all_gather(in.data_ptr(), flat.data_ptr(), in.numel(), COLL_UINT8, comm_), "allgather");
    unpackBytes(flat, outs);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::GatherOptions& opts)
{
  TORCH_CHECK(inputs.size() == 1, "coll: gather: takes exactly one input tensor per process");
  checkCpuDense(inputs[0], "gather");
  checkRoot(opts.rootRank, size_, "gather");
  int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1, "coll: gather: the root takes one output list");
    checkList(outputs[0], inputs[0], size_, "gather");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty(), "coll: gather: only the root (", root, ") takes output tensors");
  }
  at::Tensor in = inputs[0];
  return enqueue(c10d::OpType::GATHER, "gather", outs, [this, in, outs, root](CollWork&) mutable {
    at::Tensor ci = in.contiguous();
    at::Tensor flat;
    if (rank_ == root)
      flat = at::empty({static_cast<int64_t>(ci.nbytes()) * size_}, at::TensorOptions().dtype(at::kByte));
    check(coll_gather(ci.data_ptr(), rank_ == root ? flat.data_ptr() : nullptr, ci.nbytes(), COLL_UINT8, root, comm_),
          "gather");
    if (rank_ == root)
      unpackBytes(flat, outs);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::scatter(std::vector<at::Tensor>& outputs,
                                                         std::vector<std::vector<at::Tensor>>& inputs,
                                                         const c10d::ScatterOptions& opts)
{
  TORCH_CHECK(outputs.size() == 1, "coll: scatter: takes exactly one output tensor per process");
  checkCpuDense(outputs[0], "scatter");
  checkRoot(opts.rootRank, size_, "scatter");
  int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> ins;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1, "coll: scatter: the root takes one input list");
    checkList(inputs[0], outputs[0], size_, "scatter");
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty(), "coll: scatter: only the root (", root, ") takes input tensors");
  }
  at::Tensor out = outputs[0];
  return enqueue(c10d::OpType::SCATTER, "scatter", outputs, [this, out, ins, root](CollWork&) mutable {
    at::Tensor flat = rank_ == root ? packBytes(ins) : at::Tensor();
    at::Tensor co = out.contiguous();
    check(coll_scatter(rank_ == root ? flat.data_ptr() : nullptr, co.data_ptr(), co.nbytes(), COLL_UINT8, root,
                       comm_), "scatter");
    if (!co.is_same(out))
      out.copy_(co);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                               std::vector<int64_t>& outputSplits,
                                                               std::vector<int64_t>& inputSplits,
                                                               const c10d::AllToAllOptions&)
{
  checkCpuDense(output, "alltoall_base");
  checkCpuDense(input, "alltoall_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "coll: alltoall_base: input is ", input.scalar_type(),
              ", output ", output.scalar_type());
  std::vector<size_t> sc, sd, rc, rd;
  splitBytes(input, inputSplits, size_, sc, sd, "input");
  splitBytes(output, outputSplits, size_, rc, rd, "output");
  at::Tensor out = output, in = input;
  return enqueue(c10d::OpType::ALLTOALL_BASE, "alltoall", {output}, [=](CollWork&) mutable {
    at::Tensor ci = in.contiguous(), co = out.contiguous();
    check(coll_all_to_allv(ci.data_ptr(), sc.data(), sd.data(), co.data_ptr(), rc.data(), rd.data(), COLL_UINT8,
                           comm_), "alltoall");
    if (!co.is_same(out))
      out.copy_(co);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions&)
{
  TORCH_CHECK(outputs.size() == static_cast<size_t>(size_) && inputs.size() == static_cast<size_t>(size_),
              "coll: alltoall: needs ", size_, " input and ", size_, " output tensors");
  std::vector<size_t> sc(size_), sd(size_), rc(size_), rd(size_);
  size_t so = 0, ro = 0;
  for (int i = 0; i < size_; i++) {
    checkCpuDense(inputs[i], "alltoall");
    checkCpuDense(outputs[i], "alltoall");
    sc[i] = inputs[i].nbytes(), sd[i] = so, so += sc[i];
    rc[i] = outputs[i].nbytes(), rd[i] = ro, ro += rc[i];
  }
  std::vector<at::Tensor> ins = inputs, outs = outputs;
  return enqueue(c10d::OpType::ALLTOALL, "alltoall", outputs, [=](CollWork&) mutable {
    at::Tensor flat = packBytes(ins);
    at::Tensor rflat = at::empty({static_cast<int64_t>(ro)}, flat.options());
    check(coll_all_to_allv(flat.data_ptr(), sc.data(), sd.data(), rflat.data_ptr(), rc.data(), rd.data(), COLL_UINT8,
                           comm_), "alltoall");
    unpackBytes(rflat, outs);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::barrier(const c10d::BarrierOptions&)
{
  return enqueue(c10d::OpType::BARRIER, "barrier", {}, [this](CollWork&) { check(coll_barrier(comm_), "barrier"); });
}

}  // namespace torch_coll
