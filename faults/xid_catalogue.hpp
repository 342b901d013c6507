// NVIDIA XID codes the simulator knows: name and description, NVIDIA's resolution buckets (immediate and
// investigatory, as printed in NVIDIA's Xid Catalog), gpud's repair action, and the effect and symptom the
// simulator applies. Every entry is a row of gpu-domain.md 1.2 (NVIDIA "Analyzing Xid Errors with the Xid
// Catalog"; leptonai/gpud components/accelerator/nvidia/xid), bucket meanings from 1.1.
//
//   const XidInfo* x = find_xid(79);  // GPU_HAS_FALLEN_OFF_THE_BUS: RESTART_BM, effect kRebootNode
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "faults/fault_types.hpp"

namespace gputwin {

/// The kind of an NVIDIA resolution bucket (gpu-domain.md 1.1). The exact bucket text is in XidInfo.
enum class ResolutionBucket : std::uint8_t {
  kUnspecified,        ///< Blank in the catalog.
  kIgnore,             ///< IGNORE: no action.
  kRestartApp,         ///< RESTART_APP: kill or restart the process or job; GPU and node stay usable.
  kResetGpu,           ///< RESET_GPU: stop the GPU's processes, then `nvidia-smi -r`.
  kRestartBm,          ///< RESTART_BM: reboot the bare-metal host.
  kRestartVm,          ///< RESTART_VM: reboot the VM.
  kRestartFm,          ///< RESTART_FM: restart Fabric Manager (NVSwitch systems).
  kWorkflow,           ///< WORKFLOW_XID_nn / WORKFLOW_NVLINK_ERR / WORKFLOW_NVLINK5_ERR: a decision tree.
  kContactSupport,     ///< CONTACT_SUPPORT: escalate; the RMA path if it recurs.
  kCheckAppCuda,       ///< CHECK_APP/CUDA: the root cause is in the application.
  kInvestigateSw,      ///< INVESTIGATE_SW, INVESTIGATE_SW_USER: the root cause is in software.
  kInvestigateLinkSi,  ///< INVESTIGATE_LINK_SI: link signal integrity.
  kXid154,             ///< XID_154: follow the recovery action Xid 154 reports.
};

/// One catalogued XID.
struct XidInfo {
  std::uint32_t code;                 ///< The XID number (the first of a range for 144-150's rows: one each).
  std::string_view name;              ///< Mnemonic as printed in gpu-domain.md 1.2 ("GPU_ECC_DBE").
  std::string_view description;       ///< What it means, as printed (may be empty).
  std::string_view immediate;         ///< NVIDIA immediate bucket text ("RESET_GPU", "WORKFLOW_XID_48").
  std::string_view investigatory;     ///< NVIDIA investigatory bucket text (may be empty).
  ResolutionBucket immediate_bucket;  ///< Kind of the immediate bucket.
  std::string_view gpud_action;       ///< gpud's repair action and event type, as printed ("" when none).
  FaultEffect effect;                 ///< The simulator class applied on first occurrence.
  FaultEffect escalated_effect;       ///< The class when it recurs or the conservative reading (gpud) applies.
  Symptom symptom;                    ///< How it shows itself to checks and jobs.
  std::string_view note;              ///< The reference's remark on the simulator class (may be empty).
};

/// Every catalogued XID, in increasing code order.
std::span<const XidInfo> xid_catalogue();

/// The XID `code`, or nullptr if it is not catalogued.
const XidInfo* find_xid(std::uint32_t code);

/// The catalogued XIDs whose first-occurrence effect is `effect`, in code order (copies the pointers).
std::span<const XidInfo* const> xids_with_effect(FaultEffect effect);

/// The bucket kind of a bucket text as printed in the catalog ("WORKFLOW_NVLINK_ERR" -> kWorkflow);
/// kUnspecified for an empty or unknown text.
ResolutionBucket bucket_kind(std::string_view bucket_text);

/// Upper-case catalog name of a bucket kind ("RESET_GPU"; "WORKFLOW" for every workflow bucket).
std::string_view to_string(ResolutionBucket bucket);

}  // namespace gputwin
