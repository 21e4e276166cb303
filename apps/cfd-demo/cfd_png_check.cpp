// cfd-png-check: decodes PNG files and fails unless each shows something (luminance variance above
// a threshold). Used by the integration test on the consumer's output.
#include <cstdio>
#include <exception>

#include "rgb_image.h"

int main(int argc, char** argv) {
  // A blank or single-colour picture has variance 0; a rendered vortex street has hundreds.
  constexpr double kMinVariance = 20.0;
  if (argc < 2) {
    std::fprintf(stderr, "usage: cfd-png-check FILE.png...\n");
    return 2;
  }
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      const auto image = lp::cfd::RgbImage::read_png(argv[i]);
      const double variance = image.luminance_variance();
      const bool ok = variance > kMinVariance;
      std::printf("%s: %dx%d, luminance variance %.1f%s\n", argv[i], image.width(), image.height(), variance,
                  ok ? "" : " (BLANK)");
      failures += !ok;
    } catch (const std::exception& error) {
      std::printf("%s: %s\n", argv[i], error.what());
      ++failures;
    }
  }
  return failures ? 1 : 0;
}
