// The association tree of priority/multifactor: raw shares, usage accumulated per association and decayed, and
// the fair-share factor computed by Fair Tree (fair_tree.c) or the classic formula (priority_multifactor.c).
// Semantics: shared/reference/slurm-semantics.md sections 1.4 and 1.5.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gputwin {

/// Index of an association in an AssociationTree; 0 is root.
using AssocId = std::uint32_t;

/// One association as `sshare -l` shows it (after the last compute()).
struct AssociationView {
  std::string account;        ///< Account (for a user association, the account it belongs to).
  std::string user;           ///< User; empty for an account.
  AssocId parent = 0;         ///< Parent association (root's parent is itself).
  std::uint32_t raw_shares = 1;  ///< RawShares (Fairshare=).
  bool shares_parent = false; ///< Fairshare=parent.
  double norm_shares = 0;     ///< NormShares: shares / sum of siblings' shares (classic: product down the tree).
  double raw_usage = 0;       ///< RawUsage (decayed, billing-weighted CPU-seconds).
  double norm_usage = 0;      ///< NormUsage: raw_usage / root raw_usage.
  double effective_usage = 0; ///< EffectvUsage (classic) or usage / parent usage (Fair Tree).
  double level_fs = 0;        ///< LevelFS (Fair Tree); +inf when usage is 0 and shares > 0.
  double fs_factor = 0;       ///< FairShare factor in [0, 1] (users; accounts carry 0 under Fair Tree).
};

/// The account/user tree with usage and fair-share factors.
class AssociationTree {
 public:
  /// An empty tree holding only root.
  AssociationTree();

  /// Adds account `name` under `parent` (an account already added, or root); returns its id.
  /// Throws std::invalid_argument for a duplicate or an unknown parent.
  AssocId add_account(const std::string& name, AssocId parent, std::uint32_t shares, bool shares_parent = false);
  /// Adds user association (`user`, account `account`); returns its id. Throws std::invalid_argument on a duplicate.
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

  /// Recomputes every user's fair-share factor with Fair Tree.
  void compute_fair_tree();
  /// Recomputes every association's fair-share factor with the classic formula and FairShareDampeningFactor.
  void compute_classic(double dampening_factor);
  /// Fair-share factor of association `id` from the last compute (0 before the first compute).
  [[nodiscard]] double fs_factor(AssocId id) const;
  /// The sshare view of `id`.
  [[nodiscard]] AssociationView view(AssocId id) const;
  /// Ids in sshare's display order: depth-first, children in insertion order, accounts and users interleaved.
  [[nodiscard]] std::vector<AssocId> display_order() const;

 private:
  struct Node {
    AssociationView view;
    std::vector<AssocId> children;
  };
  std::vector<Node> nodes_;
  std::size_t user_count_ = 0;
};

}  // namespace gputwin
