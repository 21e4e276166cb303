#include "contact_sheet.h"

#include <algorithm>
#include <stdexcept>

namespace lp::cfd {

RgbImage ContactSheet::compose(const std::vector<RgbImage>& tiles, int columns) {
  if (tiles.empty()) throw std::invalid_argument("a contact sheet needs at least one picture");
  if (columns < 1) throw std::invalid_argument("a contact sheet needs at least one column");
  const int tile_w = tiles.front().width(), tile_h = tiles.front().height();
  for (const auto& tile : tiles) {
    if (tile.width() != tile_w || tile.height() != tile_h) {
      throw std::invalid_argument("contact sheet pictures differ in size");
    }
  }
  const int count = static_cast<int>(tiles.size());
  const int cols = std::min(columns, count), rows = (count + cols - 1) / cols;
  RgbImage sheet(kGap + cols * (tile_w + kGap), kGap + rows * (tile_h + kGap), kBackground);
  for (int i = 0; i < count; ++i) {
    sheet.paste(tiles[i], kGap + (i % cols) * (tile_w + kGap), kGap + (i / cols) * (tile_h + kGap));
  }
  return sheet;
}

std::vector<std::string> ContactSheet::pick(const std::vector<std::string>& paths, int max_tiles) {
  const int n = static_cast<int>(paths.size());
  if (max_tiles < 1 || n == 0) return {};
  if (n <= max_tiles) return paths;
  if (max_tiles == 1) return {paths.back()};
  std::vector<std::string> picked;
  for (int i = 0; i < max_tiles; ++i) {
    picked.push_back(paths[static_cast<size_t>(static_cast<long long>(i) * (n - 1) / (max_tiles - 1))]);
  }
  return picked;
}

}  // namespace lp::cfd
