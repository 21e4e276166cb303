// pvm-environment-probe: a plain PVM program (pvm3.h only) that shows what environment a PVM program
// and the task it spawns see. Usage: pvm-environment-probe HOST NAME...
// Prints "master host H NAME=VALUE|NAME unset ..." for itself, then spawns itself on HOST and prints
// the child's line, "child host H ...", which the child sends back as a PVM message.
#include <limits.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { LINE_BYTES = 8192, REPORT_TAG = 7, MAX_NAMES = 32 };

static void describe(char* line, const char* role, int count, char** names) {
  char host[256] = "";
  gethostname(host, sizeof host);
  int used = snprintf(line, LINE_BYTES, "%s host %s", role, host);
  for (int i = 0; i < count && used < LINE_BYTES; ++i) {
    const char* value = getenv(names[i]);
    used += value ? snprintf(line + used, LINE_BYTES - used, " %s=%s", names[i], value)
                  : snprintf(line + used, LINE_BYTES - used, " %s unset", names[i]);
  }
}

int main(int argc, char** argv) {
  char line[LINE_BYTES];
  if (argc >= 2 && strcmp(argv[1], "--child") == 0) {
    describe(line, "child", argc - 2, argv + 2);
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(line);
    int status = pvm_send(pvm_parent(), REPORT_TAG);
    pvm_exit();
    return status < 0 ? 1 : 0;
  }
  if (argc < 2 || argc - 2 > MAX_NAMES) {
    fprintf(stderr, "usage: pvm-environment-probe HOST NAME... (at most %d names)\n", MAX_NAMES);
    return 2;
  }
  describe(line, "master", argc - 2, argv + 2);
  printf("%s\n", line);
  fflush(stdout);

  char self[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) {
    perror("pvm-environment-probe: /proc/self/exe");
    return 1;
  }
  self[length] = '\0';
  char* child_argv[MAX_NAMES + 2];
  child_argv[0] = "--child";
  for (int i = 2; i < argc; ++i) child_argv[i - 1] = argv[i];
  child_argv[argc - 1] = NULL;
  int child = 0;
  int started = pvm_spawn(self, child_argv, PvmTaskHost, argv[1], 1, &child);
  if (started != 1) {
    fprintf(stderr, "pvm-environment-probe: pvm_spawn on %s failed (%d)\n", argv[1], started == 0 ? child : started);
    pvm_exit();
    return 1;
  }
  if (pvm_recv(child, REPORT_TAG) < 0 || pvm_upkstr(line) < 0) {
    fprintf(stderr, "pvm-environment-probe: no report from the child\n");
    pvm_exit();
    return 1;
  }
  printf("%s\n", line);
  pvm_exit();
  return 0;
}
