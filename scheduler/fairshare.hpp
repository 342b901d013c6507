// The association tree of priority/multifactor: raw shares, usage accumulated per association and decayed, and
// the fair-share factor computed by Fair Tree (fair_tree.c) or the classic formula (priority_multifactor.c).
// Semantics: shared/reference/slurm-semantics.md sections 1.4 and 1.5.
//
//   AssociationTree tree;
//   const AssocId phys = tree.add_account("phys", 0, 40);
//   const AssocId alice = tree.add_user("alice", phys, 1);
//   tree.decay(std::pow(D, dt_s));         // each PriorityCalcPeriod tick: decay, then new usage
//   tree.add_usage(alice, run_s * billing);
//   tree.compute_fair_tree();
//   double f_fs = tree.fs_factor(alice);
//
// Fair-share parentage follows assoc_mgr.c:_set_assoc_parent_and_user: an association's fair-share parent
// (fs_assoc_ptr) is its nearest ancestor without Fairshare=parent, so such an account is transparent: its children
// compete with its siblings, and it contributes no shares to its level.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gputwin {

/// Index of an association in an AssociationTree; 0 is root.
using AssocId = std::uint32_t;

/// One association as `sshare -l` shows it (after the last compute()).
struct AssociationView {
  std::string account;           ///< Account (for a user association, the account it belongs to).
  std::string user;              ///< User; empty for an account.
  AssocId parent = 0;            ///< Parent association (root's parent is itself).
  std::uint32_t raw_shares = 1;  ///< RawShares (Fairshare=).
  bool shares_parent = false;    ///< Fairshare=parent.
  double norm_shares = 0;        ///< NormShares: shares / sum of siblings' shares (classic: product down the tree).
  double raw_usage = 0;          ///< RawUsage (decayed, billing-weighted CPU-seconds).
  double norm_usage = 0;         ///< NormUsage: raw_usage / root raw_usage.
  double effective_usage = 0;    ///< EffectvUsage (classic) or usage / fair-share parent usage (Fair Tree).
  /// LevelFS (Fair Tree; 0 under classic): S/U; +inf when usage is 0 and shares > 0, and for a Fairshare=parent
  /// user; 4294967294 (Slurm's NO_VAL) for root and a Fairshare=parent account. sshare prints the last two blank.
  double level_fs = 0;
  double fs_factor = 0;  ///< FairShare factor in [0, 1] (users; accounts carry 0 under Fair Tree).
};

/// The account/user tree with usage and fair-share factors.
class AssociationTree {
 public:
  /// An empty tree holding only root.
  AssociationTree();

  /// Adds account `name` under `parent` (an account already added, or root); returns its id.
  /// Throws std::invalid_argument for a duplicate, an empty name, or an unknown (or user) parent.
  AssocId add_account(const std::string& name, AssocId parent, std::uint32_t shares, bool shares_parent = false);
  /// Adds user association (`user`, account `account`); returns its id. Throws std::invalid_argument on a duplicate,
  /// an empty name, or an `account` that is not an account already added (or root).
  AssocId add_user(const std::string& user, AssocId account, std::uint32_t shares, bool shares_parent = false);
  /// Id of account `name`, or -1.
  [[nodiscard]] std::int64_t find_account(const std::string& name) const;
  /// Id of the association of `user` in `account`, or -1.
  [[nodiscard]] std::int64_t find_user(const std::string& user, AssocId account) const;

  /// Number of associations, root included.
  [[nodiscard]] std::size_t size() const;
  /// Number of user associations (Fair Tree's g_user_assoc_count).
  [[nodiscard]] std::size_t user_count() const;
  /// True if `id` is a user association.
  [[nodiscard]] bool is_user(AssocId id) const;
  /// Parent of `id` (root's parent is root).
  [[nodiscard]] AssocId parent(AssocId id) const;

  /// Multiplies every association's raw usage by `factor` (the decay D^dt, floored at DBL_MIN as Slurm does).
  void decay(double factor);
  /// Adds `amount` of usage to `id` and every ancestor up to root.
  void add_usage(AssocId id, double amount);
  /// Zeroes all usage (PriorityUsageResetPeriod).
  void reset_usage();
  /// Raw usage of `id`.
  [[nodiscard]] double raw_usage(AssocId id) const;

  /// Recomputes every user's fair-share factor with Fair Tree, and the sshare fields of every association.
  void compute_fair_tree();
  /// Recomputes every association's fair-share factor with the classic formula and FairShareDampeningFactor.
  /// Throws std::invalid_argument unless `dampening_factor` > 0.
  void compute_classic(double dampening_factor);
  /// Fair-share factor of association `id` from the last compute (0 before the first compute).
  [[nodiscard]] double fs_factor(AssocId id) const;
  /// The sshare view of `id`.
  [[nodiscard]] AssociationView view(AssocId id) const;
  /// Ids in display order, root first: depth-first, children in insertion order, accounts and users interleaved.
  /// (Real sshare sorts each level users first, then by name: slurmdb_defs.c:_sort_childern_list.)
  [[nodiscard]] std::vector<AssocId> display_order() const;

 private:
  struct Node {
    AssociationView view;
    std::vector<AssocId> children;  ///< Real children, in insertion order.
  };
  /// Rebuilds the fair-share topology below after the tree changed.
  void rebuild_fs_topology();
  /// fair_tree.c:_calc_tree_fs over the fair-share children of `fs_parent`.
  void rank_level(AssocId fs_parent, bool account_tied, std::uint32_t& rank, std::uint32_t& rnt);

  std::vector<Node> nodes_;
  std::size_t user_count_ = 0;
  std::unordered_map<std::string, AssocId> account_ids_;  ///< Account name -> id.
  std::unordered_map<std::string, AssocId> user_ids_;     ///< user_key(account, user) -> id.
  std::vector<std::uint8_t> is_user_;                     ///< 1 for a user association.
  // Fair-share topology (assoc_mgr.c: fs_assoc_ptr, children_list, level_shares), valid unless fs_dirty_.
  bool fs_dirty_ = true;
  std::vector<AssocId> fs_parent_;                ///< Nearest ancestor without Fairshare=parent (root: root).
  std::vector<std::uint32_t> fs_children_begin_;  ///< CSR offsets into fs_children_, size() + 1 entries.
  std::vector<AssocId> fs_children_;              ///< Fair-share children per parent; Fair Tree sorts each in place.
  std::vector<std::uint64_t> level_shares_;       ///< Sum of the raw shares of the fair-share children of an id.
  std::vector<long double> level_fs_;             ///< Fair Tree LF in Slurm's precision (long double): sort key.
};

}  // namespace gputwin
