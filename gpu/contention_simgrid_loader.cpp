// make_simgrid_contention: loads the SimGrid module (contention_simgrid_module.hpp) once and asks it for a model.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/contention.hpp"
#include "gpu/contention_simgrid_module.hpp"

namespace gputwin {
namespace {

// Where the module is looked for: $GPUTWIN_SIMGRID_MODULE alone when set, else beside the running program, then where
// the build put it.
std::vector<std::string> module_candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("GPUTWIN_SIMGRID_MODULE"); env != nullptr && *env != '\0') return {env};
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) paths.push_back((self.parent_path() / kSimgridModuleFile).string());
  paths.emplace_back(GPUTWIN_SIMGRID_MODULE_PATH);
  return paths;
}

MakeSimgridContentionFn load_entry() {
  static std::once_flag once;
  static MakeSimgridContentionFn entry = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::string tried;
    for (const std::string& path : module_candidates()) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open: models live until the process ends
      if (handle == nullptr) {
        const char* why = dlerror();
        tried += "\n  " + path + ": " + (why != nullptr ? why : "cannot be loaded");
        continue;
      }
      entry = reinterpret_cast<MakeSimgridContentionFn>(dlsym(handle, kSimgridModuleEntry));
      if (entry != nullptr) return;
      tried += "\n  " + path + ": no " + kSimgridModuleEntry;
    }
    failure = std::string("SimGrid model: cannot load the module ") + kSimgridModuleFile +
              " (set GPUTWIN_SIMGRID_MODULE to its path); tried:" + tried;
  });
  if (entry == nullptr) throw FlowNetworkError(failure);
  return entry;
}

}  // namespace

std::unique_ptr<ContentionModel> make_simgrid_contention(FlowNetwork net, SimGridOptions options) {
  return std::unique_ptr<ContentionModel>(load_entry()(&net, &options));
}

}  // namespace gputwin
