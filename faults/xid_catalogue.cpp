// The XID table of gpu-domain.md 1.2, row by row. Columns: NVIDIA immediate / investigatory bucket (Xid Catalog
// [V]), gpud's action (leptonai/gpud xid.go [V]), and the reference's suggested simulator class [D], which gives
// `effect`; where the class reads "X/Y" or "X; Y if it recurs", `escalated_effect` is Y. The symptom follows from
// the class: APP -> kAppError, RESET and SERVICE -> kGpuError (kGpuLost for GPUs that vanish: 79, 143),
// INFO -> kNone.
#include "faults/xid_catalogue.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace gputwin {
namespace {

using B = ResolutionBucket;
using E = FaultEffect;
using S = Symptom;

// clang-format off
constexpr std::array kXids = {
  XidInfo{8, "FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", "RESTART_APP", "CONTACT_SUPPORT", B::kRestartApp,
          "none (Warning)", E::kRestartApp, E::kRestartApp, S::kAppError, ""},
  XidInfo{13, "GR_EXCEPTION", "graphics engine exception; usually a user bug such as an illegal address",
          "RESTART_APP", "WORKFLOW_XID_13", B::kRestartApp, "CheckUserAppAndGPU (Warning)", E::kRestartApp,
          E::kRestartApp, S::kAppError, ""},
  XidInfo{31, "FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP", "WORKFLOW_XID_31", B::kRestartApp,
          "CheckUserAppAndGPU + HW inspection (Warning)", E::kRestartApp, E::kRepairNode, S::kAppError,
          "a repeat on the same GPU suggests HW"},
  XidInfo{32, "PBDMA_ERROR", "invalid or corrupted push buffer", "RESTART_APP", "CHECK_APP/CUDA", B::kRestartApp,
          "RebootSystem + HW (Fatal)", E::kRestartApp, E::kRebootNode, S::kAppError,
          "gpud is more conservative: REBOOT"},
  XidInfo{38, "FECS watchdog timeout", "driver firmware error", "IGNORE", "CONTACT_SUPPORT", B::kIgnore,
          "RebootSystem + HW (Fatal)", E::kNone, E::kRebootNode, S::kNone, "INFO/REBOOT"},
  XidInfo{43, "RESETCHANNEL_VERIF_ERROR", "GPU stopped processing; follows a killed app", "IGNORE",
          "CONTACT_SUPPORT", B::kIgnore, "CheckUserApp (Warning)", E::kRestartApp, E::kRestartApp, S::kAppError, ""},
  XidInfo{45, "PREEMPTIVE_REMOVAL", "preemptive cleanup after earlier errors, e.g. a DBE", "WORKFLOW_XID_45",
          "alone: RESTART_FM; with others: IGNORE, follow the other Xid", B::kWorkflow, "Ignore (Warning)", E::kNone,
          E::kNone, S::kNone, "follow the co-reported Xid"},
  XidInfo{46, "GPU_TIMEOUT_ERROR", "GPU stopped processing", "RESET_GPU", "CONTACT_SUPPORT", B::kResetGpu,
          "RebootSystem (Fatal)", E::kResetGpu, E::kRepairNode, S::kGpuError,
          "NVIDIA Health Validation (GB200/GB300): CRITICAL, drain, then reset_gpu, then service_required"},
  XidInfo{48, "GPU_ECC_DBE", "double-bit (uncorrectable) ECC", "WORKFLOW_XID_48", "WORKFLOW_XID_48", B::kWorkflow,
          "RebootSystem + HW (Fatal)", E::kResetGpu, E::kRepairNode, S::kGpuError,
          "a repeat or remap failure leads to SERVICE; NVIDIA HV: CRITICAL + drain"},
  XidInfo{61, "PMU_BREAKPOINT", "catalog: \"Unused\"", "CONTACT_SUPPORT", "", B::kContactSupport,
          "RebootSystem (Fatal)", E::kRebootNode, E::kRebootNode, S::kGpuError, ""},
  XidInfo{62, "PMU_HALT_ERROR", "internal micro-controller halt", "RESET_GPU", "CONTACT_SUPPORT", B::kResetGpu,
          "RebootSystem + HW (Fatal)", E::kResetGpu, E::kResetGpu, S::kGpuError, ""},
  XidInfo{63, "INFOROM_DRAM_RETIREMENT_EVENT", "row remapped or page retired; \"reset gpu to activate\"", "IGNORE",
          "IGNORE", B::kIgnore, "RebootSystem + HW (Fatal)", E::kNone, E::kResetGpu, S::kNone,
          "INFO, but schedule a reset when idle (the remap is pending)"},
  XidInfo{64, "INFOROM_DRAM_RETIREMENT_FAILURE", "remap or retirement failed", "RESET_GPU", "CONTACT_SUPPORT",
          B::kResetGpu, "RebootSystem + HW (Fatal)", E::kRepairNode, E::kRepairNode, S::kGpuError,
          "memory has lost its self-protection; RMA candidate"},
  XidInfo{68, "NVDEC0 exception", "", "RESTART_APP", "CONTACT_SUPPORT", B::kRestartApp, "RebootSystem + HW (Fatal)",
          E::kRestartApp, E::kRestartApp, S::kAppError, ""},
  XidInfo{69, "GR_CLASS_ERROR", "", "RESTART_APP", "CHECK_APP/CUDA", B::kRestartApp, "RebootSystem + HW (Fatal)",
          E::kRestartApp, E::kRestartApp, S::kAppError, ""},
  XidInfo{74, "NVLINK_ERROR", "", "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT", B::kWorkflow, "RebootSystem + HW (Fatal)",
          E::kResetGpu, E::kRepairNode, S::kGpuError, "RESET/REBOOT; SERVICE if it recurs"},
  XidInfo{79, "GPU_HAS_FALLEN_OFF_THE_BUS", "", "RESTART_BM", "CONTACT_SUPPORT", B::kRestartBm,
          "RebootSystem + HW (Fatal)", E::kRebootNode, E::kRepairNode, S::kGpuLost,
          "recurrence leads to SERVICE; Meta saw it co-occur with PCIe errors and IPMI \"Critical Interrupt\""},
  XidInfo{92, "EXCESSIVE_SBE_INTERRUPTS", "high single-bit ECC rate", "IGNORE", "CONTACT_SUPPORT", B::kIgnore,
          "Ignore (Warning)", E::kNone, E::kNone, S::kNone, "INFO (precursor)"},
  XidInfo{94, "CONTAINED_ERROR", "contained uncorrectable memory error", "RESTART_APP", "IGNORE (sympathetic)",
          B::kRestartApp, "RebootSystem (Fatal)", E::kRestartApp, E::kRestartApp, S::kAppError,
          "only the affected process dies"},
  XidInfo{95, "UNCONTAINED_ERROR", "uncontained memory error", "RESET_GPU", "IGNORE (sympathetic)", B::kResetGpu,
          "RebootSystem + HW (Fatal)", E::kResetGpu, E::kResetGpu, S::kGpuError, "every process on the GPU dies"},
  XidInfo{109, "CTXSW_TIMEOUT_ERROR", "", "RESET_GPU", "CONTACT_SUPPORT", B::kResetGpu, "none (Warning)",
          E::kResetGpu, E::kResetGpu, S::kGpuError, ""},
  XidInfo{110, "SEC_FAULT_ERROR", "", "RESET_GPU", "INVESTIGATE_SW", B::kResetGpu, "RebootSystem + HW",
          E::kResetGpu, E::kResetGpu, S::kGpuError, ""},
  XidInfo{119, "GSP_RPC_TIMEOUT", "", "RESET_GPU", "INVESTIGATE_SW", B::kResetGpu, "RebootSystem + HW (Fatal)",
          E::kResetGpu, E::kRebootNode, S::kGpuError, "RESET/REBOOT"},
  XidInfo{120, "GSP_ERROR", "", "RESET_GPU", "INVESTIGATE_SW", B::kResetGpu, "RebootSystem + HW (Fatal)",
          E::kResetGpu, E::kRebootNode, S::kGpuError, "RESET/REBOOT"},
  XidInfo{121, "C2C_ERROR", "Grace<->GPU NVLink-C2C", "IGNORE", "CONTACT_SUPPORT", B::kIgnore, "RebootSystem + HW",
          E::kNone, E::kRebootNode, S::kNone, "INFO/REBOOT"},
  XidInfo{136, "ALI_TRAINING_FAIL", "NVLink link training failed", "RESET_GPU", "INVESTIGATE_LINK_SI", B::kResetGpu,
          "", E::kResetGpu, E::kResetGpu, S::kGpuError, ""},
  XidInfo{140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "", "RESET_GPU", "CONTACT_SUPPORT", B::kResetGpu,
          "RebootSystem + HW (Fatal)", E::kResetGpu, E::kRepairNode, S::kGpuError, "RESET, then SERVICE"},
  XidInfo{143, "GPU_INIT_ERROR", "", "RESET_GPU", "CONTACT_SUPPORT", B::kResetGpu, "HW inspection (Fatal)",
          E::kRepairNode, E::kRepairNode, S::kGpuLost, ""},
  XidInfo{144, "NVLink5 SAW error", "Blackwell NVLink5; decode the sub-unit and error status", "WORKFLOW_NVLINK5_ERR",
          "WORKFLOW_NVLINK5_ERR", B::kWorkflow, "RebootSystem (Warning)", E::kResetGpu, E::kResetGpu, S::kGpuError,
          "roughly half the NVLink5 sub-cases are benign (IGNORE) and half force a GPU reset"},
  XidInfo{145, "NVLink5 RLW error", "Blackwell NVLink5; decode the sub-unit and error status", "WORKFLOW_NVLINK5_ERR",
          "WORKFLOW_NVLINK5_ERR", B::kWorkflow, "RebootSystem (Warning)", E::kResetGpu, E::kResetGpu, S::kGpuError,
          "roughly half the NVLink5 sub-cases are benign (IGNORE) and half force a GPU reset"},
  XidInfo{146, "NVLink5 TLW error", "Blackwell NVLink5; decode the sub-unit and error status", "WORKFLOW_NVLINK5_ERR",
          "WORKFLOW_NVLINK5_ERR", B::kWorkflow, "RebootSystem (Warning)", E::kResetGpu, E::kResetGpu, S::kGpuError,
          "roughly half the NVLink5 sub-cases are benign (IGNORE) and half force a GPU reset"},
  XidInfo{147, "NVLink5 TREX error", "Blackwell NVLink5; decode the sub-unit and error status",
          "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", B::kWorkflow, "RebootSystem (Warning)", E::kResetGpu,
          E::kResetGpu, S::kGpuError,
          "roughly half the NVLink5 sub-cases are benign (IGNORE) and half force a GPU reset"},
  XidInfo{148, "NVLink5 NVLPW_CTRL error", "Blackwell NVLink5; decode the sub-unit and error status",
          "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", B::kWorkflow, "RebootSystem (Warning)", E::kResetGpu,
          E::kResetGpu, S::kGpuError,
          "roughly half the NVLink5 sub-cases are benign (IGNORE) and half force a GPU reset"},
  XidInfo{149, "NVLink5 NETIR error", "Blackwell NVLink5; NETIR_LINK_DOWN is Link Fatal (RESET_GPU), "
          "NETIR_BER_EVENT Non-fatal (IGNORE)", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", B::kWorkflow,
          "RebootSystem (Warning)", E::kResetGpu, E::kResetGpu, S::kGpuError,
          "roughly half the NVLink5 sub-cases are benign (IGNORE) and half force a GPU reset"},
  XidInfo{150, "NVLink5 MSE error", "Blackwell NVLink5; MSE_WATCHDOG is Fatal (RESET_GPU)", "WORKFLOW_NVLINK5_ERR",
          "WORKFLOW_NVLINK5_ERR", B::kWorkflow, "RebootSystem (Warning)", E::kResetGpu, E::kResetGpu, S::kGpuError,
          "roughly half the NVLink5 sub-cases are benign (IGNORE) and half force a GPU reset"},
  XidInfo{154, "GPU_RECOVERY_ACTION_CHANGED", "informational about another Xid; carries the recovery flag",
          "XID_154", "", B::kXid154, "", E::kNone, E::kNone, S::kNone, "INFO; carries the recovery flag"},
  XidInfo{155, "NVLINK_SW_DEFINED_ERROR", "", "RESET_GPU", "INVESTIGATE_SW_USER", B::kResetGpu, "RebootSystem",
          E::kResetGpu, E::kResetGpu, S::kGpuError, ""},
  XidInfo{156, "Resource retirement event", "", "RESET_GPU", "IGNORE", B::kResetGpu, "RebootSystem", E::kResetGpu,
          E::kResetGpu, S::kGpuError, ""},
  XidInfo{157, "Resource retirement failure", "", "IGNORE", "CONTACT_SUPPORT", B::kIgnore, "RebootSystem",
          E::kRepairNode, E::kRepairNode, S::kGpuError, ""},
  XidInfo{158, "GPU_FATAL_TIMEOUT", "", "RESET_GPU", "CONTACT_SUPPORT", B::kResetGpu, "RebootSystem", E::kResetGpu,
          E::kResetGpu, S::kGpuError, ""},
  XidInfo{171, "Uncorrectable DRAM error", "adds detail to Xid 48", "", "", B::kUnspecified, "", E::kResetGpu,
          E::kRepairNode, S::kGpuError, "as Xid 48"},
  XidInfo{172, "Uncorrectable SRAM error", "adds detail to Xid 48", "", "", B::kUnspecified, "", E::kResetGpu,
          E::kRepairNode, S::kGpuError, "as Xid 48"},
};
// clang-format on

constexpr bool sorted_by_code() {
  for (std::size_t i = 1; i < kXids.size(); ++i)
    if (kXids[i - 1].code >= kXids[i].code) return false;
  return true;
}
static_assert(sorted_by_code(), "kXids must be in increasing code order (find_xid binary-searches it)");

}  // namespace

std::span<const XidInfo> xid_catalogue() {
  return kXids;
}

const XidInfo* find_xid(std::uint32_t code) {
  const auto it =
      std::lower_bound(kXids.begin(), kXids.end(), code, [](const XidInfo& x, std::uint32_t c) { return x.code < c; });
  return it != kXids.end() && it->code == code ? &*it : nullptr;
}

std::span<const XidInfo* const> xids_with_effect(FaultEffect effect) {
  static const auto by_effect = [] {
    std::array<std::vector<const XidInfo*>, 5> lists;
    for (const XidInfo& x : kXids) lists[static_cast<std::size_t>(x.effect)].push_back(&x);
    return lists;
  }();
  return by_effect[static_cast<std::size_t>(effect)];
}

ResolutionBucket bucket_kind(std::string_view text) {
  if (text == "IGNORE" || text.starts_with("IGNORE ")) return B::kIgnore;
  if (text == "RESTART_APP") return B::kRestartApp;
  if (text == "RESET_GPU") return B::kResetGpu;
  if (text == "RESTART_BM") return B::kRestartBm;
  if (text == "RESTART_VM") return B::kRestartVm;
  if (text == "RESTART_FM") return B::kRestartFm;
  if (text.starts_with("WORKFLOW_")) return B::kWorkflow;
  if (text == "CONTACT_SUPPORT") return B::kContactSupport;
  if (text == "CHECK_APP/CUDA") return B::kCheckAppCuda;
  if (text.starts_with("INVESTIGATE_SW")) return B::kInvestigateSw;
  if (text == "INVESTIGATE_LINK_SI") return B::kInvestigateLinkSi;
  if (text == "XID_154") return B::kXid154;
  return B::kUnspecified;
}

std::string_view to_string(ResolutionBucket bucket) {
  switch (bucket) {
    case B::kUnspecified:
      return "";
    case B::kIgnore:
      return "IGNORE";
    case B::kRestartApp:
      return "RESTART_APP";
    case B::kResetGpu:
      return "RESET_GPU";
    case B::kRestartBm:
      return "RESTART_BM";
    case B::kRestartVm:
      return "RESTART_VM";
    case B::kRestartFm:
      return "RESTART_FM";
    case B::kWorkflow:
      return "WORKFLOW";
    case B::kContactSupport:
      return "CONTACT_SUPPORT";
    case B::kCheckAppCuda:
      return "CHECK_APP/CUDA";
    case B::kInvestigateSw:
      return "INVESTIGATE_SW";
    case B::kInvestigateLinkSi:
      return "INVESTIGATE_LINK_SI";
    case B::kXid154:
      return "XID_154";
  }
  return "";
}

}  // namespace gputwin
