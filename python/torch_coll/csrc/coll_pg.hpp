// coll_pg.hpp - torch.distributed backend "coll": a c10d::ProcessGroup over libcoll's
// public C API (include/coll.h), for torch 1.13.
//
// Every collective is queued, in issue order, to one worker thread per process group
// (libcoll communicators are used by one thread at a time; sends and receives have a
// thread each, see Lane); the caller gets a CollWork
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
#include <map>
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
  struct Item {
    c10::intrusive_ptr<CollWork> work;
    Fn fn;
    const char* name = "";
  };
  // One thread running its items in issue order. Collectives go to LANE_COLL (the
  // group's communicator); sends and receives to their own lanes, each over 2-rank
  // communicators of their own (pairComm), so a receive waiting for its message never
  // holds back a send or a collective queued after it (irecv + isend on both sides).
  struct Lane {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Item> q;
    bool stop = false;
    std::thread th;
    std::atomic<int64_t> startNs{0};  // start of the running item, 0 when idle
  };
  enum { LANE_COLL = 0, LANE_SEND, LANE_RECV, NLANES };

  c10::intrusive_ptr<c10d::Work> enqueue(int lane, c10d::OpType type, const char* name,
                                         std::vector<at::Tensor> outputs, Fn fn);
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, const char* name, std::vector<at::Tensor> outputs, Fn fn)
  {
    return enqueue(LANE_COLL, type, name, std::move(outputs), std::move(fn));
  }
  void laneLoop(Lane& lane);
  void runItem(Lane& lane, Item& item);
  void watchdogLoop();
  void abortAll();
  // Throws a std::runtime_error naming this rank, the operation and libcoll's message.
  void check(coll_status_t st, const char* what);
  [[noreturn]] void fail(const std::string& msg) const;
  // Reduction helpers (coll_reduce_ops.cpp).
  void allreduceFlat(at::Tensor& flat, const c10d::ReduceOp& op);
  void reduceScatterFlat(const at::Tensor& in, at::Tensor& out, const c10d::ReduceOp& op);
  // Point to point (coll_p2p.cpp).
  coll_comm_t pairComm(int src, int dst);
  void sendNow(const at::Tensor& t, int dst);
  void recvNow(at::Tensor& t, int src);
  int waitAnySource();
  std::string p2pKey(int src, int dst) const;

  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds timeout_;
  coll_comm_t comm_ = nullptr;
  Lane lanes_[NLANES];
  std::mutex downMu_;
  bool down_ = false;
  std::mutex wdMu_;
  std::condition_variable wdCv_;
  bool wdStop_ = false;
  std::thread watchdog_;
  std::atomic<bool> timedOut_{false};
  // 2-rank communicators of messages src -> dst (rank 0 = src), made on first use;
  // created by one lane only (sends: src == rank_, receives: dst == rank_).
  std::mutex pairMu_;
  std::map<std::pair<int, int>, coll_comm_t> pairs_;
  std::vector<int64_t> recvCount_;  // messages received from each rank (receive lane only)
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
