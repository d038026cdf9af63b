// coll_pg.hpp - torch.distributed backend "coll": a c10d::ProcessGroup over libcoll's
// public C API (include/coll.h), for torch 1.13.
//
// Every operation is queued, in issue order, to one worker thread per process group
// (libcoll communicators are used by one thread at a time); the caller gets a CollWork
// at once (wait(), is_completed(), get_future()). A watchdog thread aborts the
// communicator (coll_comm_abort) when one operation runs past the group's timeout, so
// the waiting rank raises instead of hanging; libcoll's own COLL_EXEC_TIMEOUT and its
// dead-peer detection make the other ranks raise too.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "coll.h"

namespace torch_coll {

class CollWork : public c10d::Work {
 public:
  CollWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;
  int sourceRank() const override;
  // Called once by the worker thread: marks the work and its future done (or failed).
  void complete(std::exception_ptr error);
  void setSourceRank(int rank);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::atomic<int> source_{-1};
};

class ProcessGroupColl : public c10d::ProcessGroup {
 public:
  ProcessGroupColl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                   std::chrono::milliseconds timeout);
  ~ProcessGroupColl() override;
  const std::string getBackendName() const override { return "coll"; }
  // Drains the queue, stops the threads and destroys the communicator (idempotent).
  void shutdown();
  // Name of libcoll's algorithm for the last collective (for tests and benchmarks).
  std::string lastAlgo();

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  using Fn = std::function<void(CollWork&)>;
  enum class P2p { NONE, SEND, RECV };
  struct Item {
    c10::intrusive_ptr<CollWork> work;
    Fn fn;
    const char* name;
    P2p p2p = P2p::NONE;  // a send or recv with a known peer, which may pair with the next item
    at::Tensor tensor;
    int peer = -1;
  };
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, const char* name, std::vector<at::Tensor> outputs,
                                         Fn fn);
  c10::intrusive_ptr<c10d::Work> enqueueItem(Item item);
  bool popPair(Item& first, Item& second);
  void runPair(Item& a, Item& b);
  void workerLoop();
  void watchdogLoop();
  void runItem(Item& item);
  // Throws a std::runtime_error naming this rank, the operation and libcoll's message.
  void check(coll_status_t st, const char* what);
  [[noreturn]] void fail(const std::string& msg) const;
  // Reduction helpers (coll_ops.cpp).
  void allreduceFlat(at::Tensor& flat, const c10d::ReduceOp& op);
  void reduceScatterFlat(const at::Tensor& in, at::Tensor& out, const c10d::ReduceOp& op);
  void sendNow(const at::Tensor& t, int dst);
  void recvNow(at::Tensor& t, int src);
  int waitAnySource();
  std::string p2pKey(int src, int dst) const;

  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds timeout_;
  coll_comm_t comm_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stop_ = false;
  bool down_ = false;
  std::thread worker_;
  std::thread watchdog_;
  std::atomic<int64_t> opStartNs_{0};
  std::atomic<const char*> opName_{nullptr};
  std::atomic<bool> timedOut_{false};
  std::vector<int64_t> recvCount_;  // messages received from each rank (worker thread only)
  int anyNext_ = 0;
};

// Tensor and dtype helpers (coll_ops.cpp).
coll_dtype_t collDtype(at::ScalarType st);
void checkCpuDense(const at::Tensor& t, const char* op);
// Concatenates the tensors' bytes (any dtypes, any strides) into one uint8 tensor.
at::Tensor packBytes(const std::vector<at::Tensor>& ts);
// Copies consecutive byte ranges of flat back into the tensors (inverse of packBytes).
void unpackBytes(const at::Tensor& flat, std::vector<at::Tensor>& ts);

}  // namespace torch_coll
