// coll_pg.cpp - ProcessGroupColl's life cycle: rendezvous through the c10d Store,
// the in-order worker thread, the timeout watchdog and the Work objects.
#include "coll_pg.hpp"

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

#include <pybind11/pybind11.h>

#include <cstring>
#include <memory>
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
  for (auto& l : lanes_)
    l.th = std::thread(&ProcessGroupColl::laneLoop, this, std::ref(l));
  watchdog_ = std::thread(&ProcessGroupColl::watchdogLoop, this);
}

ProcessGroupColl::~ProcessGroupColl() { shutdown(); }

void ProcessGroupColl::shutdown()
{
  {
    std::lock_guard<std::mutex> lk(downMu_);
    if (down_)
      return;
    down_ = true;
  }
  // The lanes may need the GIL to finish (a tensor they drop may own a Python object):
  // joining them while holding it deadlocks, as seen when the group died at exit.
  std::unique_ptr<pybind11::gil_scoped_release> noGil;
  if (Py_IsInitialized() && PyGILState_Check())
    noGil = std::make_unique<pybind11::gil_scoped_release>();
  for (auto& l : lanes_) {  // each lane drains its queue, then its thread ends
    {
      std::lock_guard<std::mutex> lk(l.mu);
      l.stop = true;
    }
    l.cv.notify_all();
  }
  for (auto& l : lanes_)
    if (l.th.joinable())
      l.th.join();
  {
    std::lock_guard<std::mutex> lk(wdMu_);
    wdStop_ = true;
  }
  wdCv_.notify_all();
  if (watchdog_.joinable())
    watchdog_.join();
  for (auto& kv : pairs_)
    coll_comm_destroy(kv.second);
  pairs_.clear();
  if (comm_)
    coll_comm_destroy(comm_);
  comm_ = nullptr;
}

std::string ProcessGroupColl::lastAlgo()
{
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

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::enqueue(int lane, c10d::OpType type, const char* name,
                                                         std::vector<at::Tensor> outputs, Fn fn)
{
  Item item;
  item.work = c10::make_intrusive<CollWork>(rank_, type, std::move(outputs));
  item.fn = std::move(fn);
  item.name = name;
  c10::intrusive_ptr<c10d::Work> work = item.work;
  Lane& l = lanes_[lane];
  {
    std::lock_guard<std::mutex> lk(l.mu);
    if (l.stop)
      fail(c10::str(name, " issued after the process group was shut down"));
    l.q.push_back(std::move(item));
  }
  l.cv.notify_all();
  return work;
}

void ProcessGroupColl::runItem(Lane& lane, Item& item)
{
  std::exception_ptr error;
  lane.startNs.store(nowNs());
  try {
    at::NoGradGuard noGrad;
    item.fn(*item.work);
  } catch (...) {
    error = std::current_exception();
  }
  lane.startNs.store(0);
  item.work->complete(error);
}

void ProcessGroupColl::laneLoop(Lane& lane)
{
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lk(lane.mu);
      lane.cv.wait(lk, [&lane] { return lane.stop || !lane.q.empty(); });
      if (lane.q.empty())
        return;  // stopped and drained
      item = std::move(lane.q.front());
      lane.q.pop_front();
    }
    runItem(lane, item);
  }
}

void ProcessGroupColl::abortAll()
{
  coll_comm_abort(comm_);
  std::lock_guard<std::mutex> lk(pairMu_);
  for (auto& kv : pairs_)
    coll_comm_abort(kv.second);
}

// Aborts the group's communicators once an operation has run longer than the group's
// timeout: libcoll then fails it (and every later one) with COLL_ERR_ABORTED, and tells
// the peers. Runs until shutdown, after the lanes have drained.
void ProcessGroupColl::watchdogLoop()
{
  const int64_t limitNs = static_cast<int64_t>(timeout_.count()) * 1000000;
  std::unique_lock<std::mutex> lk(wdMu_);
  while (!wdStop_) {
    wdCv_.wait_for(lk, std::chrono::milliseconds(50));
    for (auto& l : lanes_) {
      int64_t start = l.startNs.load();
      if (limitNs > 0 && start != 0 && !timedOut_.load() && nowNs() - start > limitNs) {
        timedOut_.store(true);
        abortAll();
      }
    }
  }
}

}  // namespace torch_coll
