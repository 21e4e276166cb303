#include "driver/name_resolver.h"

#include <mutex>
#include <utility>
#include <vector>

namespace lp {
namespace {

std::mutex g_testing_mutex;
NameLookup g_testing_lookup;  // empty: the system's

std::string key_of(const HostPort& where) { return where.host + ":" + std::to_string(where.port); }

NameLookup chosen_lookup() {
  std::lock_guard lock(g_testing_mutex);
  return g_testing_lookup ? g_testing_lookup : NameLookup(system_name_lookup);
}

}  // namespace

ResolvedName system_name_lookup(const HostPort& where) { return lookup_name(where.host, where.port); }

void set_name_lookup_for_testing(NameLookup lookup) {
  std::lock_guard lock(g_testing_mutex);
  g_testing_lookup = std::move(lookup);
}

std::optional<ResolvedName> numeric_name(const HostPort& where) { return numeric_name(where.host, where.port); }

NameResolver::NameResolver() : NameResolver(chosen_lookup()) {}

NameResolver::NameResolver(NameLookup lookup)
    : workers_([lookup = std::move(lookup)](const std::string& host, std::uint16_t port) {
        return lookup(HostPort{"", host, port});
      }) {}

NameResolver::~NameResolver() = default;

std::optional<ResolvedName> NameResolver::find(const HostPort& where, Clock::time_point now) {
  if (auto numeric = numeric_name(where)) return numeric;
  const std::string key = key_of(where);
  Entry& entry = cache_[key];
  const bool stale = !entry.answer || now - entry.answered >= (entry.answer->ok() ? Clock::duration(kFresh)
                                                                                  : Clock::duration(kRetryFailed));
  if (stale && !entry.asked && workers_.ask(next_id_, where.host, where.port)) {
    asked_.emplace(next_id_++, key);
    entry.asked = true;
  }  // else no worker now: the next dial asks again
  // A stale answer serves while its successor is looked up; a failed one only while fresh (the
  // dial then fails with its reason, as a dial to a name that does not resolve always did).
  if (entry.answer && (entry.answer->ok() || !stale)) return entry.answer;
  return std::nullopt;
}

int NameResolver::event_fd() const { return workers_.event_fd(); }

bool NameResolver::take_answers(Clock::time_point now) {
  auto answers = workers_.take();
  for (auto& [id, resolved] : answers) {
    const auto asked = asked_.find(id);
    if (asked == asked_.end()) continue;
    Entry& entry = cache_[asked->second];
    asked_.erase(asked);
    entry.asked = false;
    // A failed refresh keeps the last good answer (the name server may be down a moment).
    if (resolved.ok() || !entry.answer || !entry.answer->ok()) entry.answer = std::move(resolved);
    entry.answered = now;
  }
  return !answers.empty();
}

}  // namespace lp
