// The XID catalogue against gpu-domain.md 1.2: lookups by code, the NVIDIA buckets as printed, the simulator
// classes (APP -> kRestartApp, RESET -> kResetGpu, REBOOT -> kRebootNode, SERVICE -> kRepairNode, INFO -> kNone)
// and the table's internal consistency.
#include "faults/xid_catalogue.hpp"

#include <gtest/gtest.h>

#include <set>

namespace gputwin {
namespace {

TEST(XidCatalogue, FallenOffTheBusRebootsThenServices) {
  // 1.2: Xid 79 GPU_HAS_FALLEN_OFF_THE_BUS, RESTART_BM / CONTACT_SUPPORT, REBOOT; recurrence leads to SERVICE.
  const XidInfo* x = find_xid(79);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->name, "GPU_HAS_FALLEN_OFF_THE_BUS");
  EXPECT_EQ(x->immediate, "RESTART_BM");
  EXPECT_EQ(x->investigatory, "CONTACT_SUPPORT");
  EXPECT_EQ(x->immediate_bucket, ResolutionBucket::kRestartBm);
  EXPECT_EQ(x->effect, FaultEffect::kRebootNode);
  EXPECT_EQ(x->escalated_effect, FaultEffect::kRepairNode);
  EXPECT_EQ(x->symptom, Symptom::kGpuLost);
}

TEST(XidCatalogue, BucketsAndClassesOfTheImportantCodes) {
  // 1.2 rows: 13 RESTART_APP -> APP; 48 WORKFLOW_XID_48 -> RESET (SERVICE on repeat); 63 IGNORE -> INFO (reset
  // when idle); 64 RESET_GPU -> SERVICE; 94 RESTART_APP -> APP; 95 RESET_GPU -> RESET; 61 CONTACT_SUPPORT ->
  // REBOOT; 143 RESET_GPU -> SERVICE.
  struct Row {
    std::uint32_t code;
    const char* immediate;
    ResolutionBucket bucket;
    FaultEffect effect;
  };
  const Row rows[] = {
      {13, "RESTART_APP", ResolutionBucket::kRestartApp, FaultEffect::kRestartApp},
      {48, "WORKFLOW_XID_48", ResolutionBucket::kWorkflow, FaultEffect::kResetGpu},
      {63, "IGNORE", ResolutionBucket::kIgnore, FaultEffect::kNone},
      {64, "RESET_GPU", ResolutionBucket::kResetGpu, FaultEffect::kRepairNode},
      {94, "RESTART_APP", ResolutionBucket::kRestartApp, FaultEffect::kRestartApp},
      {95, "RESET_GPU", ResolutionBucket::kResetGpu, FaultEffect::kResetGpu},
      {61, "CONTACT_SUPPORT", ResolutionBucket::kContactSupport, FaultEffect::kRebootNode},
      {143, "RESET_GPU", ResolutionBucket::kResetGpu, FaultEffect::kRepairNode},
      {74, "WORKFLOW_NVLINK_ERR", ResolutionBucket::kWorkflow, FaultEffect::kResetGpu},
      {154, "XID_154", ResolutionBucket::kXid154, FaultEffect::kNone},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.code);
    const XidInfo* x = find_xid(r.code);
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->immediate, r.immediate);
    EXPECT_EQ(x->immediate_bucket, r.bucket);
    EXPECT_EQ(x->effect, r.effect);
  }
  EXPECT_EQ(find_xid(48)->escalated_effect, FaultEffect::kRepairNode);
  EXPECT_EQ(find_xid(63)->escalated_effect, FaultEffect::kResetGpu);
  EXPECT_EQ(find_xid(149)->immediate, "WORKFLOW_NVLINK5_ERR");
}

TEST(XidCatalogue, UnknownCodesAreNotFound) {
  EXPECT_EQ(find_xid(0), nullptr);
  EXPECT_EQ(find_xid(1), nullptr);
  EXPECT_EQ(find_xid(151), nullptr);  // 144-150 are catalogued, 151-153 are not
  EXPECT_EQ(find_xid(9999), nullptr);
  for (std::uint32_t code = 144; code <= 150; ++code) EXPECT_NE(find_xid(code), nullptr) << code;
}

TEST(XidCatalogue, EveryRowOfTheReferenceOnceInCodeOrder) {
  // 1.2 has 28 single rows up to 143, seven NVLink5 codes 144-150, 154-158 (five) and 171/172: 42 codes.
  const auto all = xid_catalogue();
  EXPECT_EQ(all.size(), 42u);
  std::set<std::uint32_t> codes;
  for (std::size_t i = 0; i < all.size(); ++i) {
    codes.insert(all[i].code);
    if (i) {
      EXPECT_LT(all[i - 1].code, all[i].code);
    }
    EXPECT_EQ(find_xid(all[i].code), &all[i]);
  }
  EXPECT_EQ(codes.size(), all.size());
}

TEST(XidCatalogue, TableIsConsistent) {
  // The bucket kind matches its printed text; escalation never softens the class; the symptom follows the class.
  for (const XidInfo& x : xid_catalogue()) {
    SCOPED_TRACE(x.code);
    EXPECT_EQ(bucket_kind(x.immediate), x.immediate_bucket);
    EXPECT_GE(x.escalated_effect, x.effect);
    if (x.effect == FaultEffect::kNone) {
      EXPECT_EQ(x.symptom, Symptom::kNone);
    }
    if (x.effect == FaultEffect::kRestartApp) {
      EXPECT_EQ(x.symptom, Symptom::kAppError);
    }
    if (x.effect >= FaultEffect::kResetGpu) {
      EXPECT_TRUE(x.symptom == Symptom::kGpuError || x.symptom == Symptom::kGpuLost);
    }
  }
}

TEST(XidCatalogue, ByEffect) {
  // REBOOT on first occurrence: 61 (PMU_BREAKPOINT) and 79 only.
  const auto reboot = xids_with_effect(FaultEffect::kRebootNode);
  ASSERT_EQ(reboot.size(), 2u);
  EXPECT_EQ(reboot[0]->code, 61u);
  EXPECT_EQ(reboot[1]->code, 79u);
  for (const XidInfo* x : xids_with_effect(FaultEffect::kRepairNode)) EXPECT_EQ(x->effect, FaultEffect::kRepairNode);
  std::size_t total = 0;
  for (FaultEffect e : {FaultEffect::kNone, FaultEffect::kRestartApp, FaultEffect::kResetGpu, FaultEffect::kRebootNode,
                        FaultEffect::kRepairNode})
    total += xids_with_effect(e).size();
  EXPECT_EQ(total, xid_catalogue().size());
}

TEST(XidCatalogue, BucketKindOfPrintedTexts) {
  EXPECT_EQ(bucket_kind("WORKFLOW_NVLINK5_ERR"), ResolutionBucket::kWorkflow);
  EXPECT_EQ(bucket_kind("IGNORE (sympathetic)"), ResolutionBucket::kIgnore);
  EXPECT_EQ(bucket_kind("INVESTIGATE_SW_USER"), ResolutionBucket::kInvestigateSw);
  EXPECT_EQ(bucket_kind("CHECK_APP/CUDA"), ResolutionBucket::kCheckAppCuda);
  EXPECT_EQ(bucket_kind(""), ResolutionBucket::kUnspecified);
  EXPECT_EQ(bucket_kind("NOT_A_BUCKET"), ResolutionBucket::kUnspecified);
  EXPECT_EQ(to_string(ResolutionBucket::kResetGpu), "RESET_GPU");
}

}  // namespace
}  // namespace gputwin
