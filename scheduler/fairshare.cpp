// Association tree, usage decay and the two fair-share algorithms of priority/multifactor.
// Sources (SchedMD/slurm): assoc_mgr.c (_set_assoc_parent_and_user, _get_children_level_shares,
// _normalize_assoc_shares_fair_tree, _normalize_assoc_shares_traditional), fair_tree.c (_calc_assoc_fs,
// _cmp_level_fs, _calc_tree_fs, _apply_priority_fs) and priority_multifactor.c (_apply_decay,
// set_assoc_usage_norm, _set_assoc_usage_efctv, _set_usage_efctv, priority_p_calc_fs_factor).
//
// Cost: on 1,000 users in 50 accounts (1,051 associations, random shares and usage on every user, one add_usage
// between calls) compute_fair_tree() measured 32-37 us per call and compute_classic() 32-37 us (g++ 12 -O3 -DNDEBUG,
// x86-64, shared 2-core dev box; throwaway benchmark, not in the tree): 8,640 calls, about 0.3 s, over a 30-day run at
// one call per 5-minute tick. Neither allocates once the tree stops changing (the topology is rebuilt only after an
// add_account/add_user). On targets where long double is a software quad (aarch64) the LF division costs more.
#include "scheduler/fairshare.hpp"

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gputwin {
namespace {

/// Slurm's NO_VAL as a long double: the LF of root and of Fairshare=parent accounts, and the initial prev_level_fs.
constexpr long double kNoVal = 4294967294.0L;
constexpr long double kInf = std::numeric_limits<long double>::infinity();

std::string user_key(AssocId account, const std::string& user) {
  return std::to_string(account) + '/' + user;
}

}  // namespace

AssociationTree::AssociationTree() {
  Node root;
  root.view.account = "root";
  root.view.parent = 0;
  nodes_.push_back(std::move(root));
  is_user_.push_back(0);
  account_ids_.emplace("root", 0);
}

AssocId AssociationTree::add_account(const std::string& name, AssocId parent, std::uint32_t shares,
                                     bool shares_parent) {
  if (name.empty()) throw std::invalid_argument("account name is empty");
  if (account_ids_.contains(name)) throw std::invalid_argument("duplicate account '" + name + "'");
  if (parent >= nodes_.size() || is_user_[parent]) {
    throw std::invalid_argument("account '" + name + "': parent " + std::to_string(parent) + " is not an account");
  }
  const auto id = static_cast<AssocId>(nodes_.size());
  Node node;
  node.view.account = name;
  node.view.parent = parent;
  node.view.raw_shares = shares;
  node.view.shares_parent = shares_parent;
  nodes_.push_back(std::move(node));
  nodes_[parent].children.push_back(id);
  is_user_.push_back(0);
  account_ids_.emplace(name, id);
  fs_dirty_ = true;
  return id;
}

AssocId AssociationTree::add_user(const std::string& user, AssocId account, std::uint32_t shares, bool shares_parent) {
  if (user.empty()) throw std::invalid_argument("user name is empty");
  if (account >= nodes_.size() || is_user_[account]) {
    throw std::invalid_argument("user '" + user + "': " + std::to_string(account) + " is not an account");
  }
  std::string key = user_key(account, user);
  if (user_ids_.contains(key)) {
    throw std::invalid_argument("duplicate association of user '" + user + "' in account '" +
                                nodes_[account].view.account + "'");
  }
  const auto id = static_cast<AssocId>(nodes_.size());
  Node node;
  node.view.account = nodes_[account].view.account;
  node.view.user = user;
  node.view.parent = account;
  node.view.raw_shares = shares;
  node.view.shares_parent = shares_parent;
  nodes_.push_back(std::move(node));
  nodes_[account].children.push_back(id);
  is_user_.push_back(1);
  user_ids_.emplace(std::move(key), id);
  ++user_count_;
  fs_dirty_ = true;
  return id;
}

std::int64_t AssociationTree::find_account(const std::string& name) const {
  const auto it = account_ids_.find(name);
  return it == account_ids_.end() ? -1 : static_cast<std::int64_t>(it->second);
}

std::int64_t AssociationTree::find_user(const std::string& user, AssocId account) const {
  const auto it = user_ids_.find(user_key(account, user));
  return it == user_ids_.end() ? -1 : static_cast<std::int64_t>(it->second);
}

std::size_t AssociationTree::size() const {
  return nodes_.size();
}
std::size_t AssociationTree::user_count() const {
  return user_count_;
}

bool AssociationTree::is_user(AssocId id) const {
  assert(id < nodes_.size());
  return is_user_[id] != 0;
}

AssocId AssociationTree::parent(AssocId id) const {
  assert(id < nodes_.size());
  return nodes_[id].view.parent;
}

void AssociationTree::decay(double factor) {
  // _decay_thread floors real_decay = D^dt at DBL_MIN (so decay never zeroes usage; NaN is floored too), and
  // _apply_decay skips a factor of exactly 1. Every association, root included.
  if (!(factor >= DBL_MIN)) factor = DBL_MIN;
  if (factor == 1.0) return;
  for (Node& n : nodes_) n.view.raw_usage *= factor;
}

void AssociationTree::add_usage(AssocId id, double amount) {
  assert(id < nodes_.size());
  // _apply_new_usage walks parent_assoc_ptr (the real parent, not fs_assoc_ptr) up to and including root.
  for (;;) {
    nodes_[id].view.raw_usage += amount;
    if (id == 0) break;
    id = nodes_[id].view.parent;
  }
}

void AssociationTree::reset_usage() {
  for (Node& n : nodes_) n.view.raw_usage = 0;
}

double AssociationTree::raw_usage(AssocId id) const {
  assert(id < nodes_.size());
  return nodes_[id].view.raw_usage;
}

double AssociationTree::fs_factor(AssocId id) const {
  assert(id < nodes_.size());
  return nodes_[id].view.fs_factor;
}

AssociationView AssociationTree::view(AssocId id) const {
  assert(id < nodes_.size());
  return nodes_[id].view;
}

std::vector<AssocId> AssociationTree::display_order() const {
  std::vector<AssocId> order;
  order.reserve(nodes_.size());
  std::vector<AssocId> stack{0};
  while (!stack.empty()) {
    const AssocId id = stack.back();
    stack.pop_back();
    order.push_back(id);
    const auto& children = nodes_[id].children;
    stack.insert(stack.end(), children.rbegin(), children.rend());
  }
  return order;
}

void AssociationTree::rebuild_fs_topology() {
  const std::size_t n = nodes_.size();
  // fs_assoc_ptr (assoc_mgr.c:_find_assoc_parent with direct=false): the nearest ancestor without Fairshare=parent,
  // both for an association with Fairshare=parent itself and for the children of such an account. Root never has it.
  fs_parent_.assign(n, 0);
  for (std::size_t id = 1; id < n; ++id) {
    AssocId p = nodes_[id].view.parent;
    while (p != 0 && nodes_[p].view.shares_parent) p = nodes_[p].view.parent;
    fs_parent_[id] = p;
  }
  // children_list of each fs parent, in insertion (id) order: a counting sort into CSR arrays.
  fs_children_begin_.assign(n + 1, 0);
  for (std::size_t id = 1; id < n; ++id) ++fs_children_begin_[fs_parent_[id] + 1];
  for (std::size_t i = 0; i < n; ++i) fs_children_begin_[i + 1] += fs_children_begin_[i];
  fs_children_.resize(n - 1);
  std::vector<std::uint32_t> next(fs_children_begin_.begin(), fs_children_begin_.end() - 1);
  for (std::size_t id = 1; id < n; ++id) fs_children_[next[fs_parent_[id]]++] = static_cast<AssocId>(id);
  // _get_children_level_shares: a Fairshare=parent child adds the shares of its own children_list, which is always
  // empty (its children went to its fs parent), so it adds 0.
  level_shares_.assign(n, 0);
  for (std::size_t id = 1; id < n; ++id) {
    const AssociationView& v = nodes_[id].view;
    if (!v.shares_parent) level_shares_[fs_parent_[id]] += v.raw_shares;
  }
  level_fs_.assign(n, 0);
  fs_dirty_ = false;
}

void AssociationTree::compute_fair_tree() {
  if (fs_dirty_) rebuild_fs_topology();
  const std::size_t n = nodes_.size();
  const double root_usage = nodes_[0].view.raw_usage;
  for (std::size_t id = 1; id < n; ++id) {
    AssociationView& v = nodes_[id].view;
    const AssocId fs_parent = fs_parent_[id];
    // _normalize_assoc_shares_fair_tree: S of the association, or of its fs parent for Fairshare=parent. Root's
    // level_shares is never set (0), so Fairshare=parent directly under root gets S = 0.
    const AssocId share_owner = v.shares_parent ? fs_parent : static_cast<AssocId>(id);
    const std::uint64_t level = share_owner == 0 ? 0 : level_shares_[fs_parent_[share_owner]];
    const double s =
        level == 0 ? 0.0 : static_cast<double>(nodes_[share_owner].view.raw_shares) / static_cast<double>(level);
    // _ft_set_assoc_usage_efctv: U = usage / fs parent usage, 0 if the parent has none. Slurm holds usage and LF in
    // long double; the division is done at that precision so exact LF ties break as they do in slurmctld.
    const double parent_usage = nodes_[fs_parent].view.raw_usage;
    const long double u =
        parent_usage == 0 ? 0.0L : static_cast<long double>(v.raw_usage) / static_cast<long double>(parent_usage);
    long double lf;
    if (v.shares_parent) {
      lf = is_user_[id] ? kInf : kNoVal;  // _calc_assoc_fs: users rank first in their level; accounts are skipped.
    } else if (s == 0) {
      lf = 0;  // S == 0 ranks lowest, even with no usage.
    } else {
      lf = u == 0 ? kInf : static_cast<long double>(s) / u;
    }
    level_fs_[id] = lf;
    v.norm_shares = s;
    v.norm_usage = root_usage == 0 ? 0.0 : std::min(1.0, v.raw_usage / root_usage);  // set_assoc_usage_norm
    v.effective_usage = static_cast<double>(u);
    v.level_fs = static_cast<double>(lf);
    v.fs_factor = 0;
  }
  // Root: _apply_priority_fs sets its LF to NO_VAL; shares_norm 0 (no level_shares); usage_efctv 1.
  AssociationView& root = nodes_[0].view;
  level_fs_[0] = kNoVal;
  root.norm_shares = 0;
  root.norm_usage = root_usage == 0 ? 0.0 : 1.0;
  root.effective_usage = 1.0;
  root.level_fs = static_cast<double>(kNoVal);
  root.fs_factor = 0;
  if (user_count_ == 0) return;
  auto rank = static_cast<std::uint32_t>(user_count_);
  std::uint32_t rnt = rank;
  rank_level(0, false, rank, rnt);
}

void AssociationTree::rank_level(AssocId fs_parent, bool account_tied, std::uint32_t& rank, std::uint32_t& rnt) {
  AssocId* const first = fs_children_.data() + fs_children_begin_[fs_parent];
  AssocId* const last = fs_children_.data() + fs_children_begin_[fs_parent + 1];
  // _cmp_level_fs: LF descending, then users before accounts. Slurm's qsort leaves the order of associations equal
  // on both unspecified; we break the tie by insertion order (id), which makes this a strict total order, so
  // std::sort (no allocation) gives the same result as a stable sort of the insertion-ordered children_list.
  std::sort(first, last, [this](AssocId a, AssocId b) {
    if (level_fs_[a] != level_fs_[b]) return level_fs_[a] > level_fs_[b];
    if (is_user_[a] != is_user_[b]) return is_user_[a] > is_user_[b];
    return a < b;
  });
  const double user_count = static_cast<double>(user_count_);
  long double prev_level_fs = kNoVal;  // As Slurm; only a Fairshare=parent account (nothing below it) can equal it.
  for (AssocId* it = first; it != last; ++it) {
    const AssocId id = *it;
    // _calc_tree_fs: a level entered with account_tied starts tied, so its first user keeps the current rank.
    // Otherwise equal LF with the previous sibling is a tie: users keep the rank (competition ranking), and an
    // account recurses tied, so its first user inherits the rank of the previous sibling (a user, or the last user
    // ranked inside a tied sibling account). _count_tied_accounts always returns 0 (it stops at the first account
    // and users sort before accounts), so tied accounts are walked one after the other, not merged as the
    // documentation says: slurm-semantics.md 1.5 "Tie merging".
    const bool tied = (it == first && account_tied) || prev_level_fs == level_fs_[id];
    if (is_user_[id]) {
      if (!tied) rank = rnt;
      nodes_[id].view.fs_factor = rank / user_count;
      --rnt;
    } else {
      rank_level(id, tied, rank, rnt);  // A Fairshare=parent account has no fs children: nothing happens.
    }
    prev_level_fs = level_fs_[id];
  }
}

void AssociationTree::compute_classic(double dampening_factor) {
  if (!(dampening_factor > 0)) throw std::invalid_argument("FairShareDampeningFactor must be positive");
  if (fs_dirty_) rebuild_fs_topology();
  const std::size_t n = nodes_.size();
  const double root_usage = nodes_[0].view.raw_usage;
  // Root (init(): usage_efctv = 1.0; _normalize_assoc_shares_traditional: shares_norm = 1.0 with no parent).
  AssociationView& root = nodes_[0].view;
  root.norm_shares = 1.0;
  root.norm_usage = root_usage == 0 ? 0.0 : 1.0;
  root.effective_usage = 1.0;
  root.level_fs = 0;
  root.fs_factor = 0;
  // Ids are in insertion order, so every (fs) parent is computed before its children.
  for (std::size_t id = 1; id < n; ++id) {
    AssociationView& v = nodes_[id].view;
    const AssocId fs_parent = fs_parent_[id];
    const AssociationView& pv = nodes_[fs_parent].view;
    const std::uint64_t level = level_shares_[fs_parent];
    // _normalize_assoc_shares_traditional: Fairshare=parent copies the fs parent's S; otherwise the product of
    // shares_raw / level_shares over the association and its ancestors below root without Fairshare=parent,
    // multiplied in Slurm's order (self first, walking up). A level with no shares makes it 0.
    if (v.shares_parent) {
      v.norm_shares = pv.norm_shares;
    } else {
      double s = 1.0;
      for (AssocId a = static_cast<AssocId>(id); a != 0; a = nodes_[a].view.parent) {
        const AssociationView& av = nodes_[a].view;
        if (av.shares_parent) continue;
        const std::uint64_t a_level = level_shares_[fs_parent_[a]];
        s = a_level == 0 ? 0.0 : s * (static_cast<double>(av.raw_shares) / static_cast<double>(a_level));
      }
      v.norm_shares = s;
    }
    v.norm_usage = root_usage == 0 ? 0.0 : std::min(1.0, v.raw_usage / root_usage);  // set_assoc_usage_norm
    // _set_assoc_usage_efctv, then _set_usage_efctv.
    if (fs_parent == 0) {
      v.effective_usage = v.norm_usage;
    } else if (v.shares_parent || level == 0) {
      v.effective_usage = pv.effective_usage;
    } else {
      v.effective_usage = v.norm_usage + (pv.effective_usage - v.norm_usage) *
                                             (static_cast<double>(v.raw_shares) / static_cast<double>(level));
    }
    // _get_fairshare_priority: Fairshare=parent uses its fs parent's usage_efctv and shares_norm (for an fs parent
    // that is root: 1 and 1). priority_p_calc_fs_factor: 0 when S <= 0.
    const double ue = v.shares_parent ? pv.effective_usage : v.effective_usage;
    const double s = v.shares_parent ? pv.norm_shares : v.norm_shares;
    v.fs_factor = s <= 0 ? 0.0 : std::pow(2.0, -((ue / s) / dampening_factor));
    v.level_fs = 0;
  }
}

}  // namespace gputwin
