#include "consumer_settings.h"

#include <filesystem>
#include <stdexcept>

namespace lp::cfd {

FrameConsumer::Options ConsumerSettings::for_consumer(int index) const {
  FrameConsumer::Options options;
  options.consumer = index;
  options.output_folder = (std::filesystem::path(output_folder) / ("consumer-" + std::to_string(index))).string();
  options.render_every = render_every;
  options.slow_ms = index < static_cast<int>(slow_ms.size()) ? static_cast<int>(slow_ms[index]) : 0;
  options.zoom = zoom;
  options.drops_allowed = drops_allowed;
  options.live = live;
  return options;
}

void ConsumerSettings::check() const {
  if (consumers < 1) throw std::invalid_argument("at least one consumer is needed");
  if (slow_ms.size() > static_cast<size_t>(consumers)) {
    throw std::invalid_argument("--slow-ms lists more values than there are consumers (" + std::to_string(consumers) + ")");
  }
}

}  // namespace lp::cfd
