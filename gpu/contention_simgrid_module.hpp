// The SimGrid contention model lives in a module of its own (libgputwin_simgrid.so) that make_simgrid_contention
// loads the first time it is asked for: SimGrid and the ns-3 libraries it links cost every process about 30 ms of
// dynamic linking at start (about 50,000 symbol relocations), and only runs with `"contention": "simgrid"` use it.
#pragma once

#include "gpu/contention.hpp"

namespace gputwin {

/// The module's entry point: a new SimGrid model over `*net` (moved from) with `*pools`; throws as
/// make_simgrid_contention does.
using MakeSimgridContentionFn = ContentionModel* (*)(FlowNetwork* net, const SimGridOptions* pools);

/// Name of the entry point in the module.
inline constexpr const char* kSimgridModuleEntry = "gputwin_make_simgrid_contention";

/// File name of the module.
inline constexpr const char* kSimgridModuleFile = "libgputwin_simgrid.so";

}  // namespace gputwin
