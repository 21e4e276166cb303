// The table of redirected descriptors (dial.h).
#include <sys/stat.h>

#include <mutex>
#include <unordered_map>

#include "dial.h"

namespace lp::dial {
namespace {

struct Entry {
  dev_t device;
  ino_t inode;
  Redirected redirected;
};

std::mutex table_mutex;
std::unordered_map<int, Entry>& table() {
  static std::unordered_map<int, Entry> entries;
  return entries;
}

bool identify(int fd, dev_t& device, ino_t& inode) {
  struct stat status {};
  if (fstat(fd, &status) != 0) return false;
  device = status.st_dev;
  inode = status.st_ino;
  return true;
}

}  // namespace

void remember(int fd, const Redirected& entry) {
  dev_t device{};
  ino_t inode{};
  if (!identify(fd, device, inode)) return;
  const std::lock_guard lock(table_mutex);
  table()[fd] = Entry{device, inode, entry};
}

std::optional<Redirected> lookup(int fd) {
  {
    const std::lock_guard lock(table_mutex);
    if (table().find(fd) == table().end()) return std::nullopt;
  }
  dev_t device{};
  ino_t inode{};
  const bool open = identify(fd, device, inode);
  const std::lock_guard lock(table_mutex);
  const auto found = table().find(fd);
  if (found == table().end()) return std::nullopt;
  if (!open || found->second.device != device || found->second.inode != inode) {
    table().erase(found);  // closed since, the number reused for another socket
    return std::nullopt;
  }
  return found->second.redirected;
}

}  // namespace lp::dial
