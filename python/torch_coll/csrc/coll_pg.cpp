// coll_pg.cpp - ProcessGroupColl's life cycle: rendezvous through the c10d Store,
// the in-order worker thread, the timeout watchdog and the Work objects.
#include "coll_pg.hpp"

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <stdexcept>

namespace torch_coll {

namespace {

int64_t nowNs()
{
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* kUidKey = "coll/unique_id";

}  // namespace

CollWork::CollWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type), outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get())))
{
}

c10::intrusive_ptr<c10::ivalue::Future> CollWork::getFuture() { return future_; }

std::vector<at::Tensor> CollWork::result() { return outputs_; }

int CollWork::sourceRank() const
{
  int s = source_.load();
  TORCH_CHECK(s >= 0, "coll: sourceRank() is only set for a completed recv from any source");
  return s;
}

void CollWork::setSourceRank(int rank) { source_.store(rank); }

void CollWork::complete(std::exception_ptr error)
{
  finish(error);
  if (error)
    future_->setError(error);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

ProcessGroupColl::ProcessGroupColl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size), store_(store), timeout_(timeout), recvCount_(size, 0)
{
  coll_unique_id_t id;
  if (rank == 0) {
    check(coll_get_unique_id(&id), "coll_get_unique_id");
    const uint8_t* p = reinterpret_cast<const uint8_t*>(id.internal);
    store_->set(kUidKey, std::vector<uint8_t>(p, p + sizeof(id.internal)));
  } else {
    std::vector<uint8_t> v = store_->get(kUidKey);
    if (v.size() != sizeof(id.internal))
      fail(c10::str("the store's ", kUidKey, " has ", v.size(), " bytes, expected ", sizeof(id.internal)));
    std::memcpy(id.internal, v.data(), v.size());
  }
  check(coll_comm_init_rank(&comm_, size, id, rank), "coll_comm_init_rank");
  worker_ = std::thread(&ProcessGroupColl::workerLoop, this);
  watchdog_ = std::thread(&ProcessGroupColl::watchdogLoop, this);
}

ProcessGroupColl::~ProcessGroupColl() { shutdown(); }

void ProcessGroupColl::shutdown()
{
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (down_)
      return;
    down_ = true;
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable())
    worker_.join();
  if (watchdog_.joinable())
    watchdog_.join();
  if (comm_)
    coll_comm_destroy(comm_);
  comm_ = nullptr;
}

std::string ProcessGroupColl::lastAlgo()
{
  std::lock_guard<std::mutex> lk(mu_);
  const char* a = comm_ ? coll_comm_last_algo(comm_) : nullptr;
  return a ? a : "";
}

void ProcessGroupColl::fail(const std::string& msg) const
{
  throw std::runtime_error(c10::str("coll (rank ", rank_, " of ", size_, "): ", msg));
}

void ProcessGroupColl::check(coll_status_t st, const char* what)
{
  if (st == COLL_SUCCESS)
    return;
  std::string detail = coll_last_error();
  if (timedOut_.load())
    fail(c10::str(what, " timed out after ", timeout_.count(), " ms (the group's timeout, init_process_group/new_group",
                  " timeout=...); the communicator was aborted: ", coll_strerror(st),
                  detail.empty() ? "" : ": ", detail));
  fail(c10::str(what, " failed: ", coll_strerror(st), detail.empty() ? "" : ": ", detail));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::enqueue(c10d::OpType type, const char* name,
                                                         std::vector<at::Tensor> outputs, Fn fn)
{
  Item item;
  item.work = c10::make_intrusive<CollWork>(rank_, type, std::move(outputs));
  item.fn = std::move(fn);
  item.name = name;
  return enqueueItem(std::move(item));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::enqueueItem(Item item)
{
  c10::intrusive_ptr<c10d::Work> work = item.work;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stop_)
      fail(c10::str(item.name, " issued after the process group was shut down"));
    queue_.push_back(std::move(item));
  }
  cv_.notify_all();
  return work;
}

// A send followed in the queue by a recv (or the reverse) runs as one coll_sendrecv,
// so the usual exchange (irecv + isend on both sides, batch_isend_irecv pairs) does
// not wait on itself. Called with mu_ held and first just popped.
bool ProcessGroupColl::popPair(Item& first, Item& second)
{
  if (first.p2p == P2p::NONE || queue_.empty())
    return false;
  Item& next = queue_.front();
  if (next.p2p == P2p::NONE || next.p2p == first.p2p)
    return false;
  second = std::move(next);
  queue_.pop_front();
  return true;
}

void ProcessGroupColl::runPair(Item& a, Item& b)
{
  Item& s = a.p2p == P2p::SEND ? a : b;
  Item& r = a.p2p == P2p::SEND ? b : a;
  std::exception_ptr error;
  opName_.store("sendrecv");
  opStartNs_.store(nowNs());
  try {
    at::NoGradGuard noGrad;
    at::Tensor cs = s.tensor.contiguous(), cr = r.tensor.contiguous();
    store_->add(p2pKey(rank_, s.peer), 1);
    check(coll_sendrecv(cs.data_ptr(), cs.nbytes(), s.peer, cr.data_ptr(), cr.nbytes(), r.peer, COLL_UINT8, comm_),
          "sendrecv");
    recvCount_[r.peer]++;
    if (!cr.is_same(r.tensor))
      r.tensor.copy_(cr);
    r.work->setSourceRank(r.peer);
  } catch (...) {
    error = std::current_exception();
  }
  opStartNs_.store(0);
  a.work->complete(error);
  b.work->complete(error);
}

void ProcessGroupColl::runItem(Item& item)
{
  std::exception_ptr error;
  opName_.store(item.name);
  opStartNs_.store(nowNs());
  try {
    at::NoGradGuard noGrad;
    item.fn(*item.work);
  } catch (...) {
    error = std::current_exception();
  }
  opStartNs_.store(0);
  item.work->complete(error);
}

void ProcessGroupColl::workerLoop()
{
  for (;;) {
    Item item, second;
    bool pair;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty())
        return;  // stop_ and drained
      item = std::move(queue_.front());
      queue_.pop_front();
      pair = popPair(item, second);
    }
    if (pair)
      runPair(item, second);
    else
      runItem(item);
  }
}

// Aborts the communicator once an operation has run longer than the group's timeout:
// libcoll then fails it (and every later one) with COLL_ERR_ABORTED, and tells the peers.
void ProcessGroupColl::watchdogLoop()
{
  const int64_t limitNs = static_cast<int64_t>(timeout_.count()) * 1000000;
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_ || !queue_.empty() || opStartNs_.load() != 0) {
    cv_.wait_for(lk, std::chrono::milliseconds(50));
    int64_t start = opStartNs_.load();
    if (limitNs > 0 && start != 0 && !timedOut_.load() && nowNs() - start > limitNs) {
      timedOut_.store(true);
      coll_comm_abort(comm_);
    }
  }
}

}  // namespace torch_coll
