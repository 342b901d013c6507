// Tests for slurm.conf, gres.conf, sacctmgr dump and sacctmgr QOS parsing: the realistic GPU site in
// tests/model/data/acme (slurm.conf including nodes.conf), the configuration of the real Slurm recording in
// ../shared/slurm-recordings/dev-1, inline snippets for each syntax rule, and the exact messages of bad input.
#include "model/slurm_conf.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/errors.hpp"
#include "model/hostlist.hpp"

namespace gputwin {
namespace {

const std::string kAcme = std::string(GPUTWIN_SOURCE_DIR) + "/tests/model/data/acme";
const std::string kDev1 = std::string(GPUTWIN_SHARED_DIR) + "/slurm-recordings/dev-1";

SlurmConf parse(const std::string& text) {
  std::istringstream in(text);
  return parse_slurm_conf(in, "t.conf", kAcme);
}

// The message of the ConfigError `f` throws, or "" if it does not throw.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string conf_error(const std::string& text) {
  return error_of([&] { parse(text); });
}

std::vector<std::string> keys(const std::vector<ConfSetting>& settings) {
  std::vector<std::string> out;
  for (const auto& s : settings) out.push_back(s.key);
  return out;
}

std::vector<std::size_t> range(std::size_t first, std::size_t last) {
  std::vector<std::size_t> out;
  for (std::size_t i = first; i <= last; ++i) out.push_back(i);
  return out;
}

TEST(SlurmConf, AcmeNodesFromIncludedFileWithDefaults) {
  const SlurmConf conf = read_slurm_conf(kAcme + "/slurm.conf");
  EXPECT_EQ(conf.files, (std::vector<std::string>{kAcme + "/slurm.conf", kAcme + "/nodes.conf"}));
  EXPECT_EQ(conf.cluster_name, "acme");
  // 16 + 1 H100 nodes, 4 H200 nodes, 4 CPU nodes, in definition order.
  ASSERT_EQ(conf.nodes.size(), 25U);
  const SlurmNode& gpu001 = conf.nodes[0];
  EXPECT_EQ(gpu001.name, "gpu001");
  EXPECT_EQ(gpu001.cpus, 112U);  // NodeName=DEFAULT Sockets=2 x CoresPerSocket=56 x ThreadsPerCore=1
  EXPECT_EQ(gpu001.sockets, 2U);
  EXPECT_EQ(gpu001.cores_per_socket, 56U);
  EXPECT_EQ(gpu001.threads_per_core, 1U);
  EXPECT_EQ(gpu001.real_memory_mb, 2063000U);
  EXPECT_EQ(gpu001.gpus, 8U);
  EXPECT_EQ(gpu001.gpu_type, "h100");
  EXPECT_FALSE(gpu001.mixed_gpu_types);
  EXPECT_EQ(gpu001.weight, 10U);
  EXPECT_EQ(gpu001.state, "UNKNOWN");
  EXPECT_EQ(gpu001.features, "h100,ib");
  EXPECT_EQ(gpu001.source.file, kAcme + "/nodes.conf");
  EXPECT_EQ(gpu001.source.line, 3U);
  EXPECT_EQ(conf.nodes[15].name, "gpu016");
  EXPECT_EQ(conf.nodes[16].name, "gpu017");
  EXPECT_EQ(conf.nodes[16].state, "DRAIN");
  const SlurmNode& h200 = conf.nodes[17];
  EXPECT_EQ(h200.name, "h200n1");
  EXPECT_EQ(h200.cpus, 96U);  // CPUs= wins over sockets x cores
  EXPECT_EQ(h200.real_memory_mb, 1546000U);
  EXPECT_EQ(h200.gpus, 8U);
  EXPECT_EQ(h200.gpu_type, "");  // Gres=gpu:8; the type is in gres.conf
  EXPECT_EQ(h200.weight, 20U);
  EXPECT_EQ(conf.nodes[20].name, "h200n4");
  const SlurmNode& cpu01 = conf.nodes[21];
  EXPECT_EQ(cpu01.name, "cpu01");
  EXPECT_EQ(cpu01.cpus, 256U);  // Boards=1 x SocketsPerBoard=2 x CoresPerSocket=64 x ThreadsPerCore=2
  EXPECT_EQ(cpu01.threads_per_core, 2U);
  EXPECT_EQ(cpu01.real_memory_mb, 515000U);
  EXPECT_EQ(cpu01.gpus, 0U);    // the second NodeName=DEFAULT sets Gres=""
  EXPECT_EQ(cpu01.weight, 1U);  // ... and Weight=1
  EXPECT_EQ(conf.nodes[24].name, "cpu04");
}

TEST(SlurmConf, AcmePartitionsWithDefaultsAndNodeSets) {
  const SlurmConf conf = read_slurm_conf(kAcme + "/slurm.conf");
  ASSERT_EQ(conf.partitions.size(), 4U);
  const SlurmPartition& gpu = conf.partitions[0];
  EXPECT_EQ(gpu.name, "gpu");
  EXPECT_EQ(gpu.nodes_expr, "gpu[001-016],hopper");
  std::vector<std::size_t> gpu_nodes = range(0, 15);           // gpu001-016
  for (std::size_t i : range(17, 20)) gpu_nodes.push_back(i);  // NodeSet hopper = Feature h200
  EXPECT_EQ(gpu.nodes, gpu_nodes);
  EXPECT_FALSE(gpu.all_nodes);
  EXPECT_TRUE(gpu.is_default);
  EXPECT_EQ(gpu.default_time_s, 3600);   // PartitionName=DEFAULT DefaultTime=01:00:00
  EXPECT_EQ(gpu.max_time_s, 2 * 86400);  // MaxTime=2-00:00:00
  EXPECT_EQ(gpu.state, "UP");
  EXPECT_EQ(gpu.priority_tier, 1U);
  EXPECT_EQ(gpu.priority_job_factor, 1U);
  EXPECT_EQ(gpu.tres_billing_weights, "CPU=0.1,Mem=0.01G,GRES/gpu=1.0");  // quoted, after a continued line
  EXPECT_EQ(gpu.source.line, 65U);

  const SlurmPartition& debug = conf.partitions[1];
  EXPECT_EQ(debug.name, "debug");
  EXPECT_EQ(debug.nodes, (std::vector<std::size_t>{14, 15}));
  EXPECT_FALSE(debug.is_default);
  EXPECT_EQ(debug.default_time_s, 30 * 60);  // DefaultTime=30 (minutes)
  EXPECT_EQ(debug.max_time_s, 3600);
  EXPECT_EQ(debug.priority_tier, 2U);
  EXPECT_EQ(debug.priority_job_factor, 10U);
  EXPECT_EQ(debug.qos, "debug");
  EXPECT_EQ(debug.preempt_mode, "CANCEL");
  EXPECT_EQ(debug.grace_time_s, 120);

  const SlurmPartition& cpu = conf.partitions[2];
  EXPECT_EQ(cpu.nodes, range(21, 24));
  EXPECT_EQ(cpu.max_time_s, -1);  // UNLIMITED
  EXPECT_FALSE(cpu.priority_tier.has_value());
  EXPECT_EQ(cpu.tres_billing_weights, "CPU=1.0");

  const SlurmPartition& all = conf.partitions[3];
  EXPECT_TRUE(all.all_nodes);
  EXPECT_EQ(all.nodes, range(0, 24));
  EXPECT_EQ(all.state, "DRAIN");
}

TEST(SlurmConf, AcmeSchedulerPriorityAndAccounting) {
  const SlurmConf conf = read_slurm_conf(kAcme + "/slurm.conf");
  EXPECT_EQ(conf.scheduler_type, "sched/backfill");
  EXPECT_EQ(conf.select_type, "select/cons_tres");
  EXPECT_EQ(conf.select_type_parameters, "CR_Core_Memory");
  const SlurmSchedulerParameters& s = conf.scheduler;
  EXPECT_EQ(s.bf_interval, 60);
  EXPECT_EQ(s.bf_window, 2880);
  EXPECT_EQ(s.bf_resolution, 300);
  EXPECT_EQ(s.bf_max_job_test, 1000);
  EXPECT_EQ(s.bf_max_job_start, 100);
  EXPECT_EQ(s.sched_interval, 120);
  EXPECT_EQ(s.default_queue_depth, 200);
  EXPECT_EQ(s.batch_sched_delay, 5);
  EXPECT_TRUE(s.bf_continue);
  EXPECT_EQ(conf.over_time_limit_min, 5);
  EXPECT_EQ(conf.kill_wait_s, 60);

  const SlurmPriorityParameters& p = conf.priority;
  EXPECT_EQ(p.type, "priority/multifactor");
  EXPECT_EQ(p.weight_age, 1000U);
  EXPECT_EQ(p.weight_fairshare, 10000U);
  EXPECT_EQ(p.weight_job_size, 500U);  // written priorityweightjobsize
  EXPECT_EQ(p.weight_partition, 2000U);
  EXPECT_EQ(p.weight_qos, 5000U);
  EXPECT_EQ(p.weight_assoc, 0U);
  EXPECT_EQ(p.weight_tres, "CPU=0,Mem=0,GRES/gpu=3000");
  EXPECT_EQ(p.max_age_s, 14 * 86400);
  EXPECT_EQ(p.favor_small, false);
  EXPECT_EQ(p.calc_period_s, 120);  // PriorityCalcPeriod=2 (minutes)
  EXPECT_EQ(p.decay_half_life_s, 7 * 86400);
  EXPECT_EQ(p.usage_reset_period, "MONTHLY");
  EXPECT_EQ(p.flags, "MAX_TRES,DEPTH_OBLIVIOUS");
  EXPECT_EQ(p.fairshare_dampening_factor, 1U);

  EXPECT_EQ(conf.accounting_storage_enforce, "associations,limits,qos,safe");
  EXPECT_EQ(conf.preempt_type, "preempt/qos");
  EXPECT_EQ(conf.preempt_mode, "REQUEUE");
  EXPECT_EQ(conf.preempt_exempt_time_s, 600);

  EXPECT_EQ(
      keys(conf.not_modelled),
      (std::vector<std::string>{"SchedulerParameters", "DefMemPerGPU", "TopologyPlugin", "NodeName=h200n[1-4] TmpDisk",
                                "PartitionName=gpu OverSubscribe", "PartitionName=all AllowAccounts"}));
  EXPECT_EQ(conf.not_modelled[0].value, "bf_max_job_user=50");
  EXPECT_EQ(conf.not_modelled[0].source.line, 29U);  // the first line of the continued SchedulerParameters
  EXPECT_EQ(conf.ignored.size(), 20U);               // hosts, ports, paths, logs, auth, accounting storage
}

TEST(SlurmConf, GresConfGivesTypesToUntypedNodes) {
  SlurmConf conf = read_slurm_conf(kAcme + "/slurm.conf");
  const GresConf gres = read_gres_conf(kAcme + "/gres.conf");
  EXPECT_EQ(gres.autodetect, "off");
  ASSERT_EQ(gres.gpus.size(), 2U);
  EXPECT_EQ(gres.gpus[0].nodes.size(), 17U);
  EXPECT_EQ(gres.gpus[0].type, "h100");
  EXPECT_EQ(gres.gpus[0].count, 8U);  // File=/dev/nvidia[0-7]
  EXPECT_EQ(gres.gpus[1].type, "nvidia_h200");
  ASSERT_EQ(gres.not_modelled.size(), 1U);
  EXPECT_EQ(gres.not_modelled[0].value, "mps");
  EXPECT_EQ(gres.not_modelled[0].source.line, 5U);

  EXPECT_EQ(apply_gres_conf(conf, gres), std::vector<std::string>{});
  EXPECT_EQ(conf.nodes[0].gpu_type, "h100");          // slurm.conf's own type stands
  EXPECT_EQ(conf.nodes[17].gpu_type, "nvidia_h200");  // from gres.conf
  EXPECT_EQ(conf.nodes[21].gpu_type, "");

  std::istringstream disagree("NodeName=gpu001 Name=gpu Type=a100 Count=4\n");
  EXPECT_EQ(apply_gres_conf(conf, parse_gres_conf(disagree, "g.conf")),
            (std::vector<std::string>{
                "node gpu001: gres.conf lists 4 GPUs, slurm.conf's Gres= 8; slurm.conf's count is used",
                "node gpu001: gres.conf Type=a100 differs from slurm.conf's gpu:h100; slurm.conf's type is used"}));
}

// fuzz_gres_conf: a NodeName= whose two bracket groups expand as a product (701 x 701 = 491,401 hosts, within the
// hostlist's 2^20 cap) took 13 s under ASan, indexing every host; only slurm.conf's nodes are indexed now (release
// build: 2.7 s -> 0.6 s). The unknown hosts still give one note per line, and the named slurm.conf node its type.
TEST(SlurmConf, GresConfNamingHostsByTheHundredThousandIndexesOnlySlurmConfNodes) {
  SlurmConf conf = read_slurm_conf(kAcme + "/slurm.conf");
  ASSERT_EQ(conf.nodes[17].name, "h200n1");
  std::istringstream product("NodeName=x[001-701]y[001-701],h200n1 Name=gpu Type=b200 File=/dev/nvidia[0-7]\n");
  const GresConf gres = parse_gres_conf(product, "g.conf");
  ASSERT_EQ(gres.gpus.size(), 1U);
  EXPECT_EQ(gres.gpus[0].nodes.size(), 491'402U);
  const std::vector<std::string> notes = apply_gres_conf(conf, gres);
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes[0], "g.conf: line 1: node 'x001y001' is not in slurm.conf; ignored");
  EXPECT_EQ(conf.nodes[17].gpu_type, "b200");
}

TEST(SlurmConf, RealRecordingConfig) {
  // The slurm.conf the dev-1 recording ran under (4 x 8 H100, Slurm 22.05).
  const SlurmConf conf = read_slurm_conf(kDev1 + "/slurm.conf");
  EXPECT_EQ(conf.cluster_name, "twin");
  ASSERT_EQ(conf.nodes.size(), 4U);
  for (const SlurmNode& n : conf.nodes) {
    EXPECT_EQ(n.cpus, 64U);
    EXPECT_EQ(n.real_memory_mb, 512000U);
    EXPECT_EQ(n.gpus, 8U);
    EXPECT_EQ(n.gpu_type, "h100");
  }
  EXPECT_EQ(conf.nodes[3].name, "gpu04");
  ASSERT_EQ(conf.partitions.size(), 2U);
  EXPECT_EQ(conf.partitions[0].max_time_s, -1);  // INFINITE
  EXPECT_EQ(conf.partitions[1].name, "debug");
  EXPECT_EQ(conf.partitions[1].nodes, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(conf.partitions[1].max_time_s, 3600);
  EXPECT_EQ(conf.partitions[1].priority_job_factor, 10U);
  EXPECT_EQ(conf.scheduler.bf_interval, 5);
  EXPECT_EQ(conf.scheduler.bf_resolution, 60);
  EXPECT_FALSE(conf.scheduler.bf_window.has_value());
  EXPECT_EQ(conf.kill_wait_s, 5);
  EXPECT_EQ(conf.priority.calc_period_s, 60);
  EXPECT_EQ(conf.priority.decay_half_life_s, 86400);  // 1-0
  EXPECT_EQ(conf.priority.weight_tres, "GRES/gpu=1000");
  EXPECT_EQ(keys(conf.not_modelled), (std::vector<std::string>{"DefMemPerCPU"}));
}

TEST(SlurmConf, SyntaxRules) {
  const SlurmConf conf = parse(
      "# comment line\n"
      "clustername=t   SchedulerType=sched/builtin # two pairs, then a comment\n"
      "Reason=\"a \\# is not a comment\"\n"  // escaped '#', quoted blanks (an unknown key: kept)
      "NodeName=DEFAULT CPUs=8\n"
      "NodeName=DEFAULT RealMemory=1000\n"  // defaults accumulate
      "NodeName=n[1-2] \\\n"
      "   Gres=gpu:a100:2,gpu:h100:2,nic:1 State=idle\n"
      "NodeName=n3 Gres=gpu:no_consume:4(S:0-1) Weight=5\n"
      "NodeName=m[01-02] Sockets=2 CoresPerSocket=4 CPUs=6\n"
      "DownNodes=n3 State=DRAIN Reason=bad\n"
      "NodeSet=ms Nodes=m[01-02]\n"
      "PartitionName=DEFAULT MaxTime=10\n"
      "PartitionName=p Nodes=n[1-3],ms Priority=3\n"
      "PartitionName=q Nodes=n1 PriorityTier=4 Priority=7 MaxTime=1-12 DefaultTime=NONE\n"
      "PartitionName=empty Nodes=\n");
  EXPECT_EQ(conf.cluster_name, "t");
  EXPECT_EQ(conf.scheduler_type, "sched/builtin");
  ASSERT_EQ(conf.not_modelled.size(), 2U);
  EXPECT_EQ(conf.not_modelled[0].key, "Reason");
  EXPECT_EQ(conf.not_modelled[0].value, "a # is not a comment");
  EXPECT_EQ(conf.not_modelled[1].key, "NodeName=n[1-2] Gres");
  EXPECT_EQ(conf.not_modelled[1].value, "nic");
  ASSERT_EQ(conf.nodes.size(), 5U);
  EXPECT_EQ(conf.nodes[0].cpus, 8U);
  EXPECT_EQ(conf.nodes[0].real_memory_mb, 1000U);
  EXPECT_EQ(conf.nodes[0].gpus, 4U);  // gpu:a100:2 + gpu:h100:2
  EXPECT_EQ(conf.nodes[0].gpu_type, "a100");
  EXPECT_TRUE(conf.nodes[0].mixed_gpu_types);
  EXPECT_EQ(conf.nodes[0].state, "IDLE");
  EXPECT_EQ(conf.nodes[0].source.line, 6U);  // a continued line is located at its first line
  EXPECT_EQ(conf.nodes[2].gpus, 4U);
  EXPECT_EQ(conf.nodes[2].gpu_type, "");
  EXPECT_EQ(conf.nodes[2].weight, 5U);
  EXPECT_EQ(conf.nodes[2].state, "DRAIN");  // DownNodes
  EXPECT_EQ(conf.nodes[3].name, "m01");
  EXPECT_EQ(conf.nodes[3].cpus, 6U);
  ASSERT_EQ(conf.partitions.size(), 3U);
  EXPECT_EQ(conf.partitions[0].nodes, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(conf.partitions[0].max_time_s, 600);
  EXPECT_EQ(conf.partitions[0].priority_tier, 3U);  // legacy Priority= sets both
  EXPECT_EQ(conf.partitions[0].priority_job_factor, 3U);
  EXPECT_EQ(conf.partitions[1].priority_tier, 4U);  // ... unless given on their own
  EXPECT_EQ(conf.partitions[1].priority_job_factor, 7U);
  EXPECT_EQ(conf.partitions[1].max_time_s, 36 * 3600);  // 1-12: days-hours
  EXPECT_FALSE(conf.partitions[1].default_time_s.has_value());
  EXPECT_TRUE(conf.partitions[2].nodes.empty());
}

TEST(SlurmConf, IncludeResolvesAgainstTheIncludingFileAndClusterName) {
  // "Include %c.conf" with ClusterName=nodes reads nodes.conf from the including file's folder (kAcme here).
  const SlurmConf conf = parse("ClusterName=nodes\nInclude %c.conf\nPartitionName=p Nodes=ALL\n");
  EXPECT_EQ(conf.files, (std::vector<std::string>{"t.conf", kAcme + "/nodes.conf"}));
  EXPECT_EQ(conf.nodes.size(), 25U);
  EXPECT_EQ(conf.partitions[0].nodes.size(), 25U);
  EXPECT_EQ(conf_error("Include missing.conf\n"),
            "t.conf: line 1: cannot open '" + kAcme + "/missing.conf': No such file or directory");
}

TEST(SlurmConf, ErrorsNameFileLineAndField) {
  EXPECT_EQ(error_of([] { read_slurm_conf(kAcme + "/bad.conf"); }),
            kAcme + "/bad.conf: line 5: NodeName=gpu[01-04]: RealMemory: 'lots' is not a non-negative integer");
  EXPECT_EQ(error_of([] { read_slurm_conf(kAcme + "/none.conf"); }),
            kAcme + "/none.conf: cannot open: No such file or directory");
  EXPECT_EQ(conf_error("ClusterName=x\nBogus\n"), "t.conf: line 2: expected Key=Value, found 'Bogus'");
  EXPECT_EQ(conf_error("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n[1-2]\n"),
            "t.conf: line 2: PartitionName=p: Nodes: no node named 'n2' (no NodeName line defines it)");
  EXPECT_EQ(conf_error("NodeName=n1\nPartitionName=p Nodes=n1 MaxTime=2days\n"),
            "t.conf: line 2: PartitionName=p: MaxTime: '2days' is not a Slurm time (minutes, mm:ss, hh:mm:ss, "
            "d-hh, d-hh:mm:ss or UNLIMITED)");
  EXPECT_EQ(conf_error("NodeName=n1\nPartitionName=p Nodes=n1\nPartitionName=p Nodes=n1\n"),
            "t.conf: line 3: PartitionName=p: defined twice");
  EXPECT_EQ(conf_error("NodeName=n[1-2]\n\nNodeName=n2\n"), "t.conf: line 3: NodeName=n2: node 'n2' is defined twice");
  EXPECT_EQ(conf_error("NodeName=n1 State=BROKEN\n"),
            "t.conf: line 1: NodeName=n1: State: 'BROKEN' is not a node state (UNKNOWN, IDLE, DOWN, DRAIN, FAIL, "
            "FAILING, FUTURE, CLOUD)");
  EXPECT_EQ(conf_error("NodeName=n1 Gres=gpu:h100:x:8\n"),
            "t.conf: line 1: NodeName=n1: Gres: 'gpu:h100:x:8' has 'gpu:h100:x:8', expected gpu[:type][:count]");
  EXPECT_EQ(conf_error("NodeName=n1 Gres=gpu:h100:eight\n"),
            "t.conf: line 1: NodeName=n1: Gres: 'gpu:h100:eight' has a bad GPU count in 'gpu:h100:eight'");
  EXPECT_EQ(conf_error("SchedulerParameters=bf_continue,bf_interval=soon\n"),
            "t.conf: line 1: SchedulerParameters: bf_interval: 'soon' is not an integer");
  EXPECT_EQ(conf_error("PriorityWeightAge=-5\n"),
            "t.conf: line 1: PriorityWeightAge: '-5' is not a non-negative integer");
  EXPECT_EQ(conf_error("PriorityFavorSmall=maybe\n"), "t.conf: line 1: PriorityFavorSmall: 'maybe' is not YES or NO");
  EXPECT_EQ(conf_error("PriorityUsageResetPeriod=FORTNIGHTLY\n"),
            "t.conf: line 1: PriorityUsageResetPeriod: 'FORTNIGHTLY' is not NONE, NOW, DAILY, WEEKLY, MONTHLY, "
            "QUARTERLY or YEARLY");
  EXPECT_EQ(conf_error("PreemptMode=NICELY\n"),
            "t.conf: line 1: PreemptMode: 'NICELY' is not a preempt mode (OFF, CANCEL, REQUEUE, SUSPEND, GANG, "
            "WITHIN)");
  EXPECT_EQ(conf_error("NodeName=n1\nPartitionName=p Nodes=n1 TRESBillingWeights=CPU=lots\n"),
            "t.conf: line 2: PartitionName=p: TRESBillingWeights: 'CPU=lots' has 'CPU=lots', expected TRES=weight");
  EXPECT_EQ(conf_error("\n\nReason=\"open\n"), "t.conf: line 3: unbalanced double quote");
  std::string hostlist_problem;  // the hostlist module's own wording
  try {
    expand_hostlist("n[2-1]");
  } catch (const std::invalid_argument& e) {
    hostlist_problem = e.what();
  }
  EXPECT_EQ(conf_error("NodeName=n[2-1]\n"), "t.conf: line 1: NodeName=n[2-1]: " + hostlist_problem);
}

TEST(SacctmgrDump, AcmeAccountsAndUsers) {
  const SacctmgrDump dump = read_sacctmgr_dump(kAcme + "/assoc.cfg");
  EXPECT_EQ(dump.cluster, "acme");
  EXPECT_EQ(dump.root.fairshare, 1U);
  EXPECT_EQ(dump.root.qos, "normal");
  ASSERT_EQ(dump.accounts.size(), 5U);
  const SacctmgrAssoc& ml = dump.accounts[0];
  EXPECT_EQ(ml.name, "ml");
  EXPECT_EQ(ml.parent, "root");
  EXPECT_EQ(ml.fairshare, 60U);
  EXPECT_EQ(ml.grp_tres, "gres/gpu=96");
  EXPECT_EQ(ml.other, (std::vector<std::pair<std::string, std::string>>{{"Description", "machine learning"},
                                                                        {"Organization", "acme"}}));
  EXPECT_EQ(ml.source.line, 10U);
  EXPECT_TRUE(dump.accounts[1].fairshare_parent);  // ops: Fairshare=parent
  EXPECT_FALSE(dump.accounts[1].fairshare.has_value());
  EXPECT_EQ(dump.accounts[2].name, "physics");
  EXPECT_EQ(dump.accounts[2].fairshare, 30U);
  EXPECT_EQ(dump.accounts[3].name, "nlp");
  EXPECT_EQ(dump.accounts[3].parent, "ml");
  EXPECT_EQ(dump.accounts[3].grp_tres, "gres/gpu=64,node=8");
  EXPECT_EQ(dump.accounts[4].name, "vision");
  EXPECT_EQ(dump.accounts[4].parent, "ml");
  EXPECT_EQ(dump.accounts[4].max_jobs, 20);

  ASSERT_EQ(dump.users.size(), 6U);
  EXPECT_EQ(dump.users[0].name, "root");
  EXPECT_EQ(dump.users[0].parent, "root");
  const SacctmgrAssoc& alice = dump.users[1];
  EXPECT_EQ(alice.name, "alice");
  EXPECT_EQ(alice.parent, "ml");
  EXPECT_EQ(alice.default_account, "ml");
  EXPECT_EQ(alice.fairshare, 1U);
  EXPECT_EQ(alice.max_jobs, 8);
  EXPECT_EQ(alice.default_qos, "normal");
  EXPECT_EQ(dump.users[2].name, "dave");
  EXPECT_EQ(dump.users[2].priority, 10U);
  const SacctmgrAssoc& carol = dump.users[3];
  EXPECT_EQ(carol.parent, "physics");
  EXPECT_TRUE(carol.fairshare_parent);  // dumped as 2147483647 (SLURMDB_FS_USE_PARENT)
  EXPECT_EQ(carol.max_submit_jobs, 100);
  EXPECT_EQ(carol.max_wall_s, 2880 * 60);  // MaxWallDurationPerJob is in minutes
  EXPECT_EQ(dump.users[4].name, "alice");
  EXPECT_EQ(dump.users[4].parent, "vision");
  EXPECT_EQ(dump.users[4].qos, "high,normal");
  EXPECT_EQ(dump.users[5].default_qos, "high");
  EXPECT_EQ(dump.users[5].other,
            (std::vector<std::pair<std::string, std::string>>{{"GrpTRESMins", "gres/gpu=100000"}}));
}

TEST(SacctmgrDump, Errors) {
  auto dump_error = [](const std::string& text) {
    return error_of([&] {
      std::istringstream in(text);
      parse_sacctmgr_dump(in, "a.cfg");
    });
  };
  EXPECT_EQ(dump_error("Cluster - 'c'\nParent - 'ml'\n"),
            "a.cfg: line 2: Parent - 'ml': no Account line defines it before");
  EXPECT_EQ(dump_error("Cluster - 'c'\nAccount - 'ml':Fairshare=lots\n"),
            "a.cfg: line 2: Account 'ml': Fairshare: 'lots' is not a number of shares or 'parent'");
  EXPECT_EQ(dump_error("Cluster - 'c'\nAccount - 'ml':MaxJobs=many\n"),
            "a.cfg: line 2: Account 'ml': MaxJobs: 'many' is not a count");
  EXPECT_EQ(dump_error("Cluster - 'c'\nAccount - 'ml':Description='open\n"),
            "a.cfg: line 2: unbalanced quote in ''ml':Description='open'");
  EXPECT_EQ(dump_error("Cluster - 'c'\nGroup - 'g'\n"),
            "a.cfg: line 2: unknown line type 'Group' (expected Cluster, Parent, Account, User)");
  EXPECT_EQ(dump_error("cluster c\n"),
            "a.cfg: line 1: expected \"Cluster - 'name'\", \"Parent - 'account'\", \"Account - 'name':...\" or "
            "\"User - 'name':...\", found 'cluster c'");
}

TEST(SacctmgrQos, AcmeQos) {
  const std::vector<SacctmgrQos> qos = read_sacctmgr_qos(kAcme + "/qos.txt");
  ASSERT_EQ(qos.size(), 3U);
  EXPECT_EQ(qos[0].name, "normal");
  EXPECT_EQ(qos[0].priority, 0U);
  EXPECT_EQ(qos[0].preempt_mode, "");  // "cluster": inherit
  EXPECT_EQ(qos[0].usage_factor, 1.0);
  const SacctmgrQos& high = qos[1];
  EXPECT_EQ(high.name, "high");
  EXPECT_EQ(high.priority, 100U);
  EXPECT_EQ(high.grace_time_s, 60);
  EXPECT_EQ(high.preempt, std::vector<std::string>{"normal"});
  EXPECT_EQ(high.preempt_mode, "REQUEUE");
  EXPECT_EQ(high.flags, "DenyOnLimit");
  EXPECT_EQ(high.usage_factor, 2.0);
  EXPECT_EQ(high.grp_tres, "gres/gpu=64");
  EXPECT_EQ(high.grp_jobs, 20);
  EXPECT_EQ(high.grp_submit_jobs, 200);
  EXPECT_EQ(high.max_tres, "gres/gpu=32,node=4");
  EXPECT_EQ(high.max_wall_s, 2 * 86400);
  EXPECT_EQ(high.max_tres_per_user, "gres/gpu=16");
  EXPECT_EQ(high.max_jobs_per_user, 4);
  EXPECT_EQ(high.max_submit_per_user, 100);
  EXPECT_TRUE(high.other.empty());
  EXPECT_EQ(qos[2].max_wall_s, 1800);
  EXPECT_EQ(qos[2].other, (std::vector<std::pair<std::string, std::string>>{{"GrpTRESMins", "gres/gpu=6000"}}));
  EXPECT_EQ(qos[2].source.line, 4U);
}

TEST(SacctmgrQos, ParsableWithTrailingBarAndErrors) {
  std::istringstream p("Name|Priority|MaxWall|\nlow|5||\n");
  const std::vector<SacctmgrQos> qos = parse_sacctmgr_qos(p, "q.txt");
  ASSERT_EQ(qos.size(), 1U);
  EXPECT_EQ(qos[0].priority, 5U);
  EXPECT_FALSE(qos[0].max_wall_s.has_value());
  auto qos_error = [](const std::string& text) {
    return error_of([&] {
      std::istringstream in(text);
      parse_sacctmgr_qos(in, "q.txt");
    });
  };
  EXPECT_EQ(qos_error("normal|0|00:00:00\n"),
            "q.txt: line 1: expected a header line naming the columns, with a Name column (sacctmgr show qos -P, "
            "without -n)");
  EXPECT_EQ(qos_error("Name|Priority\nhigh|1|2\n"),
            "q.txt: line 2: expected 2 '|'-separated fields as in the header, found 3");
  EXPECT_EQ(qos_error("Name|Priority\nhigh|top\n"),
            "q.txt: line 2: QOS high: Priority: 'top' is not a non-negative integer");
  EXPECT_EQ(qos_error("Name|MaxWall\nhigh|forever\n"),
            "q.txt: line 2: QOS high: MaxWall: 'forever' is not a Slurm time");
  EXPECT_EQ(qos_error(""), "q.txt: empty file: expected sacctmgr show qos -P output");
}

TEST(SlurmConf, FormatSlurmTime) {
  EXPECT_EQ(format_slurm_time(-1), "UNLIMITED");
  EXPECT_EQ(format_slurm_time(0), "00:00:00");
  EXPECT_EQ(format_slurm_time(3599), "00:59:59");
  EXPECT_EQ(format_slurm_time(2 * 86400 + 3 * 3600 + 4 * 60 + 5), "2-03:04:05");
}

}  // namespace
}  // namespace gputwin
