// module.cpp - torch_coll._C: creates ProcessGroupColl for torch.distributed's
// Backend.register_backend("coll", ...) (see ../__init__.py).
#include "coll_pg.hpp"

#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include <mutex>
#include <vector>

namespace py = pybind11;

namespace {

// Groups still alive, so that shutdown_all (an atexit hook) can destroy their
// communicators (and libcoll's shared-memory segments) before the interpreter exits.
std::mutex gMu;
std::vector<c10::weak_intrusive_ptr<torch_coll::ProcessGroupColl>> gGroups;

c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                              const std::chrono::duration<float>& timeout)
{
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  c10::intrusive_ptr<torch_coll::ProcessGroupColl> pg;
  {
    py::gil_scoped_release release;  // rendezvous waits for the other ranks
    pg = c10::make_intrusive<torch_coll::ProcessGroupColl>(store, rank, size, ms);
  }
  std::lock_guard<std::mutex> lk(gMu);
  gGroups.emplace_back(pg);
  return pg;
}

void shutdownAll()
{
  // Without the GIL: a group may be destroyed here (its last reference can be the weak
  // one below), and its threads may need the GIL to finish.
  py::gil_scoped_release release;
  std::vector<c10::weak_intrusive_ptr<torch_coll::ProcessGroupColl>> groups;
  {
    std::lock_guard<std::mutex> lk(gMu);
    groups.swap(gGroups);
  }
  for (auto& w : groups)
    if (auto p = w.lock())
      p->shutdown();
  groups.clear();
}

std::string lastAlgo(const c10::intrusive_ptr<c10d::ProcessGroup>& pg)
{
  auto* c = dynamic_cast<torch_coll::ProcessGroupColl*>(pg.get());
  TORCH_CHECK(c, "coll: last_algo: not a coll process group");
  return c->lastAlgo();
}

}  // namespace

PYBIND11_MODULE(_C, m)
{
  m.doc() = "torch.distributed backend over libcoll";
  m.def("create_process_group", &create, py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"));
  m.def("shutdown_all", &shutdownAll, "destroy every live coll communicator (atexit)");
  m.def("last_algo", &lastAlgo, py::arg("pg"), "libcoll's algorithm for the group's last collective");
  m.def("version", []() { return std::string(coll_get_version(nullptr, nullptr, nullptr)); });
}
