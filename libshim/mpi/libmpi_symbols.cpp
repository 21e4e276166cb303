// Finding libmpi's symbols at run time (libmpi_symbols.h).
#include "libmpi_symbols.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace lp::libmpi {
namespace {

// The loaded libmpi.so* object, found once: its path and a handle to it (kept for the process's
// lifetime), or nulls if none is loaded.
struct LoadedLibmpi {
  std::string path;
  void* handle = nullptr;
};

int note_libmpi(dl_phdr_info* info, std::size_t, void* data) {
  const char* path = info->dlpi_name;
  if (path == nullptr || *path == '\0') return 0;
  const char* slash = std::strrchr(path, '/');
  const char* base = slash ? slash + 1 : path;
  if (std::strncmp(base, "libmpi.so", 9) != 0) return 0;
  static_cast<LoadedLibmpi*>(data)->path = path;
  return 1;  // the first one
}

const LoadedLibmpi& loaded_libmpi() {
  static std::once_flag once;
  static LoadedLibmpi libmpi;
  std::call_once(once, [] {
    dl_iterate_phdr(note_libmpi, &libmpi);
    // RTLD_NOLOAD: only a handle to the object already there (loaded with RTLD_LOCAL, say); never
    // a second copy.
    if (!libmpi.path.empty()) libmpi.handle = dlopen(libmpi.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  });
  return libmpi;
}

}  // namespace

void* find(const char* name) noexcept {
  // The global scope: libmpi linked by the program, or made global by whoever loaded it. For an
  // object this is the executable's copy where there is one, which libmpi itself uses too.
  if (void* address = dlsym(RTLD_DEFAULT, name)) return address;
  std::string where = "not in the global scope, and no libmpi.so is loaded";
  try {
    const LoadedLibmpi& libmpi = loaded_libmpi();
    if (libmpi.handle) {
      if (void* address = dlsym(libmpi.handle, name)) return address;
      where = "neither in the global scope nor in " + libmpi.path;
    } else if (!libmpi.path.empty()) {
      where = "not in the global scope, and " + libmpi.path + " cannot be opened";
    }
  } catch (...) {
    where = "not in the global scope; looking for libmpi.so failed";
  }
  std::fprintf(stderr, "liblongpipe: the MPI front end needs Open MPI's %s: %s; aborting\n", name, where.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace lp::libmpi
