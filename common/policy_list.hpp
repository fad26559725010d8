#pragma once
// A family of policies closed at compile time. The L2's replacement policies and set hashes are
// instantiated into its access loop as template parameters, so that no call per line is
// indirect; the family is therefore a list of types rather than a run-time registry. Each type
// carries `kName` and `kDescription`; the list gives the names (in list order, which is also
// the explorer's numbering), their descriptions, and a variant built from a name's position.
// Adding a policy is its header, its test and one entry in the family's list.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/named_policy.hpp"

namespace tilesim {

template <class... Policies>
struct PolicyList {
  using Variant = std::variant<Policies...>;
  static constexpr std::size_t size = sizeof...(Policies);

  static std::vector<std::string> names() { return {std::string(Policies::kName)...}; }
  static std::vector<NamedPolicy> described() {
    return {NamedPolicy{std::string(Policies::kName), std::string(Policies::kDescription)}...};
  }
  /// A name's position in the list, or `size` when no policy has that name.
  static std::size_t index_of(std::string_view name) {
    std::size_t i = 0, found = size;
    ((found = found == size && Policies::kName == name ? i : found, ++i), ...);
    return found;
  }
  /// The policy at `index` (< size), constructed from `args` where it takes them (a seed, the
  /// cache's geometry), default-constructed where it takes none.
  template <class... Args>
  static Variant make(std::size_t index, const Args&... args) {
    std::optional<Variant> out;
    std::size_t i = 0;
    ((i++ == index ? (void)out.emplace(std::in_place_type<Policies>, construct<Policies>(args...)) : (void)0), ...);
    return std::move(*out);
  }

 private:
  // Only a declared constructor takes the arguments: an aggregate (a stateless policy) would
  // otherwise have its first member initialised from them by C++20's parenthesised aggregate
  // initialisation.
  template <class P, class... Args>
  static P construct(const Args&... args) {
    if constexpr (!std::is_aggregate_v<P> && std::is_constructible_v<P, const Args&...>) return P(args...);
    else return P{};
  }
};

}  // namespace tilesim
