/* A program that has no MPI of its own and loads an MPI program as a plugin, the way interpreters
 * (Python, Julia, R) and plugin hosts do: dlopen(PLUGIN, RTLD_NOW | RTLD_LOCAL), then its entry
 * point. libmpi comes in as the plugin's dependency and stays out of the global scope, so a
 * preloaded library can reach it only through the loaded object itself.
 *   front_end_dlopen_host PLUGIN ENTRY [ARGS...]   (ENTRY: int ENTRY(int argc, char** argv)) */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: front_end_dlopen_host PLUGIN ENTRY [ARGS...]\n");
    return 2;
  }
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    fprintf(stderr, "front_end_dlopen_host: %s\n", dlerror());
    return 2;
  }
  /* What this program is for: libmpi loaded, but not global. */
  if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world") != NULL) {
    fprintf(stderr, "front_end_dlopen_host: libmpi is in the global scope; nothing to test\n");
    return 2;
  }
  int (*entry)(int, char**) = (int (*)(int, char**))dlsym(plugin, argv[2]);
  if (entry == NULL) {
    fprintf(stderr, "front_end_dlopen_host: %s\n", dlerror());
    return 2;
  }
  argv[2] = argv[1];
  return entry(argc - 2, argv + 2);
}
