// Two or more relays joined by a perfect in-memory network, with simulated local sockets: what the
// relay tests drive. Frames move when pump() runs; a local socket "reads" (takes pending output)
// only while its `reading` is set; dials succeed at once unless `refuse_dials` is set.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "relay/relay.h"

namespace lpd::test {

struct LocalEnd {
  std::string received;
  bool reading = true;
  bool shut_down = false;  // the relay asked for shutdown(SHUT_WR)
  bool closed = false;
  bool reset = false;
  std::string dialled;  // for dialled ones: the address
};

inline std::span<const std::byte> bytes_of(const std::string& text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

inline std::string pattern(std::size_t size, unsigned seed) {
  std::string text(size, '\0');
  unsigned state = seed * 2654435761u + 1;
  for (auto& c : text) {
    state = state * 1103515245u + 12345u;
    c = static_cast<char>(state >> 16);
  }
  return text;
}

struct Node {
  std::string endpoint;
  std::unique_ptr<Relay> relay;
  std::map<Handle, LocalEnd> locals;
  std::vector<Transmit> sent;  // every frame this node transmitted (for inspection)
  bool refuse_dials = false;
  std::size_t write_limit = SIZE_MAX;  // bytes a local socket takes per pump round
};

class Network {
 public:
  Node& add(const std::string& site, std::uint64_t instance, RelayLimits limits = RelayLimits{}) {
    Node& node = nodes_[site];
    node.endpoint = site + "-gw:7400";
    node.relay = std::make_unique<Relay>(site, instance, limits);
    return node;
  }
  // Every node knows every other.
  void connect_all() {
    for (auto& [site, node] : nodes_) {
      std::map<std::string, std::string> peers;
      for (auto& [other, other_node] : nodes_) {
        if (other != site) peers[other] = other_node.endpoint;
      }
      node.relay->set_peers(peers);
    }
  }
  Node& operator[](const std::string& site) { return nodes_.at(site); }

  // Writes `data` into the local socket `handle` of `site` as far as its read budget allows;
  // returns how many bytes went in.
  std::size_t feed(const std::string& site, Handle handle, const std::string& data) {
    Relay& relay = *nodes_.at(site).relay;
    std::size_t done = 0;
    while (done < data.size()) {
      const std::size_t n = std::min(relay.read_budget(handle), data.size() - done);
      if (n == 0) break;
      relay.on_local_data(handle, bytes_of(data.substr(done, n)));
      done += n;
    }
    return done;
  }

  // Moves frames and local bytes until nothing changes (or `rounds` runs out).
  void pump(int rounds = 100000) {
    for (int round = 0; round < rounds; ++round) {
      bool moved = false;
      for (auto& [site, node] : nodes_) {
        while (auto transmit = node.relay->poll_transmit()) {
          moved = true;
          node.sent.push_back(*transmit);
          const auto target = std::find_if(nodes_.begin(), nodes_.end(),
                                           [&](const auto& entry) { return entry.second.endpoint == transmit->endpoint; });
          if (target != nodes_.end()) target->second.relay->on_frame(node.endpoint, transmit->message);
        }
        while (auto action = node.relay->poll_local()) {
          moved = true;
          LocalEnd& end = node.locals[action->handle];
          if (action->kind == LocalAction::Kind::kDial) {
            end.dialled = action->address.text();
            if (node.refuse_dials) node.relay->on_local_reset(action->handle, "connection refused");
            else node.relay->on_dialled(action->handle);
          } else if (action->kind == LocalAction::Kind::kShutdownWrite) {
            end.shut_down = true;
          } else {
            // A reset's last bytes land in the socket's buffer, read or not.
            end.received.append(reinterpret_cast<const char*>(action->last_bytes.data()), action->last_bytes.size());
            end.closed = true;
            end.reset = action->reset;
          }
        }
        // A local socket with bytes waiting is one the test opened, or a dialled one.
        for (Handle handle : node.relay->take_dirty()) node.locals[handle];
        for (auto& [handle, end] : node.locals) {
          if (!end.reading || end.closed) continue;
          const auto pending = node.relay->pending_output(handle);
          const std::size_t n = std::min(pending.size(), node.write_limit);
          if (n == 0) continue;
          end.received.append(reinterpret_cast<const char*>(pending.data()), n);
          node.relay->on_written(handle, n);
          moved = true;
        }
      }
      if (!moved) return;
    }
  }

  // The one dialled local socket of `site` (the far end of a stream), 0 if none.
  Handle dialled(const std::string& site, const std::string& address) {
    for (auto& [handle, end] : nodes_.at(site).locals) {
      if (end.dialled == address) return handle;
    }
    return 0;
  }

 private:
  std::map<std::string, Node> nodes_;
};

}  // namespace lpd::test
