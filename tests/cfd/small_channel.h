// small_channel(): a flow set-up small enough for quick solver tests (and the sanitizer builds).
#pragma once

#include "flow_config.h"

inline lp::cfd::FlowConfig small_channel() {
  lp::cfd::FlowConfig config;
  config.width = 64;
  config.height = 32;
  config.reynolds = 50;
  return config;
}
