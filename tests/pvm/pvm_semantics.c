/* pvm_semantics: a plain PVM 3 program (no LongPipe header, no LongPipe call) that exercises the
 * message-passing semantics LongPipe's PVM front end must preserve, and prints a transcript that
 * does not depend on task ids or timing. tests/pvm runs it with and without LD_PRELOAD of
 * liblongpipe.so and requires identical transcripts.
 *
 *   pvm_semantics [HOST]     the master: spawns two workers (A, B) and one plain worker (P,
 *                            spawned with LD_PRELOAD removed from its environment), on HOST if
 *                            given (the other site of a two-site virtual machine), drives them
 *   pvm_semantics vanish [HOST]  a worker that is killed while messages to it are under way:
 *                            the job goes on (LongPipe reports the vanished peer on stderr)
 *   (spawned as) worker A|B|P|V
 *
 * Covered: every encoding (PvmDataDefault with 8-byte items across fragment boundaries,
 * PvmDataRaw, PvmDataInPlace), pvm_bufinfo / pvm_getminfo values, tag and source wildcards and
 * out-of-order matching, order of a long stream, pvm_psend / pvm_precv, pvm_mcast to LongPipe and
 * plain tasks, a plain task talking to LongPipe tasks both ways, pvm_trecv time-out, pvm_probe /
 * pvm_nrecv, a message handler (pvm_addmhf), a new context, a selective receive of the message
 * behind a long backlog, and pvm_notify(PvmTaskExit) arriving after the exiting task's last message.
 */
#include <pvm3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
  TAG_ROLE = 1, TAG_ENCODING = 10, TAG_ECHO = 19, TAG_WILD = 5, TAG_STREAM = 15, TAG_PSEND = 20,
  TAG_MCAST = 30, TAG_MIXED = 35, TAG_PROBE = 40, TAG_HANDLER = 50, TAG_EXIT_NOTIFY = 60,
  TAG_CONTEXT = 70, TAG_LAST_WORDS = 80, TAG_REPORT = 90, TAG_GO = 95, TAG_NEVER = 99, TAG_EARLY = 110,
  TAG_BACKLOG = 120, TAG_BACKLOG_LAST = 121,
};

/* BACKLOG_MESSAGES: more than LongPipe's front end hands to libpvm3 ahead of a receive (kGateBound +
 * kLibPvmQueueBound), so a selective receive for the message behind them must reach past its bounds. */
/* A starts this late; the master's early stream (EARLY_MESSAGES x EARLY_MESSAGE_GAP_US = 2 s) begins
 * when LongPipe's 2 s wait for A's directory entry has run out, so A starts in the middle of it. */
enum { A_START_DELAY_SECONDS = 3, EARLY_MESSAGE_GAP_US = 10000 };

enum { STREAM_MESSAGES = 300, EARLY_MESSAGES = 200, BACKLOG_MESSAGES = 100, BIG_DOUBLES = 20011, WORKERS = 3 };

static char report[1 << 16];

static void say(const char *format, ...) {
  va_list args;
  size_t used = strlen(report);
  va_start(args, format);
  vsnprintf(report + used, sizeof report - used, format, args);
  va_end(args);
}

static void fail(const char *what) {
  fprintf(stderr, "pvm_semantics: %s failed\n", what);
  pvm_exit();
  exit(1);
}

static const char *encoding_name(int enc) {
  if (enc == 0x10000000) return "xdr";
  if (enc == 0x20000000) return "inplace";
  return "native";
}

/* Describes the current receive buffer without tids: length, tag, whether the source is `from`. */
static void describe(const char *what, int mid, int from) {
  struct pvmminfo info;
  int len, tag, src;
  pvm_bufinfo(mid, &len, &tag, &src);
  pvm_getminfo(mid, &info);
  say("%s: len %d tag %d from-expected %d | minfo len %d tag %d ctx-default %d wid %d enc %s crc %d dst-me %d\n",
      what, len, tag, src == from, info.len, info.tag, info.ctx == 0, info.wid, encoding_name(info.enc),
      info.crc, info.dst == pvm_mytid());
}

static double big_value(int i, int salt) { return i * 0.5 + salt; }

/* ---------------------------------------------------------------------------- master */

static void send_encodings(int to) {
  static double big[BIG_DOUBLES];
  int encodings[3] = {PvmDataDefault, PvmDataRaw, PvmDataInPlace};
  for (int e = 0; e < 3; e++) {
    int ints[5] = {1, -2, 3, 2147483647, -2147483647 - 1};
    short shorts[3] = {7, -8, 9};
    float f = 1.5f;
    double d = -2.25;
    long l = 1234567890123L;
    char odd[3] = {'x', 'y', 'z'};
    for (int i = 0; i < BIG_DOUBLES; i++) big[i] = big_value(i, e);
    pvm_initsend(encodings[e]);
    pvm_pkint(ints, 5, 1);
    pvm_pkbyte(odd, 3, 1); /* odd byte count: XDR pads, raw does not */
    if (encodings[e] != PvmDataInPlace) { /* in place packs contiguous data only */
      pvm_pkshort(shorts, 3, 1);
      pvm_pkfloat(&f, 1, 1);
      pvm_pkdouble(&d, 1, 1);
      pvm_pklong(&l, 1, 1);
      pvm_pkstr("a string");
      pvm_pkint(ints, 3, 2); /* strided */
    }
    pvm_pkdouble(big, BIG_DOUBLES, 1); /* many fragments */
    if (pvm_send(to, TAG_ENCODING + e) < 0) fail("pvm_send encoding");
  }
}

static void master(char *self, char *host) {
  int workers[WORKERS];
  const char *names[WORKERS] = {"A", "B", "P"};
  int me = pvm_mytid();
  if (me < 0) fail("pvm_mytid");
  char *argv_a[] = {"worker", "A", NULL}, *argv_b[] = {"worker", "B", NULL}, *argv_p[] = {"worker", "P", NULL};
  int flags = host ? PvmTaskHost : PvmTaskDefault;
  char *where = host ? host : "";
  if (pvm_spawn(self, argv_a, flags, where, 1, &workers[0]) != 1) fail("spawn A");
  if (pvm_spawn(self, argv_b, flags, where, 1, &workers[1]) != 1) fail("spawn B");
  unsetenv("LD_PRELOAD"); /* the mixed job: P runs without whatever was preloaded here */
  if (pvm_spawn(self, argv_p, flags, where, 1, &workers[2]) != 1) fail("spawn P");
  int a = workers[0], b = workers[1], p = workers[2];
  printf("master: spawned %d workers\n", WORKERS);

  /* Everyone learns everyone's tid (a message to each right after spawn: a route decided early). */
  for (int w = 0; w < WORKERS; w++) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(workers, WORKERS, 1);
    pvm_pkint(&me, 1, 1);
    pvm_send(workers[w], TAG_ROLE);
  }

  /* A stream sent while A is still starting (A_START_DELAY_SECONDS): with LongPipe its first messages
   * go through the pvmd and the rest over LongPipe once A has answered; A checks the order. */
  for (int i = 0; i < EARLY_MESSAGES; i++) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&i, 1, 1);
    pvm_send(a, TAG_EARLY);
    usleep(EARLY_MESSAGE_GAP_US); /* the stream spans A's start */
  }

  /* Encodings, echoed back. */
  send_encodings(a);
  for (int e = 0; e < 3; e++) {
    int mid = pvm_recv(a, TAG_ECHO);
    int ok;
    pvm_upkint(&ok, 1, 1);
    printf("master: echo %d ok %d\n", e, ok);
    (void)mid;
  }

  /* Tag and source wildcards, matched out of order by A. */
  for (int t = 0; t < 3; t++) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&t, 1, 1);
    pvm_send(a, TAG_WILD + t * 100);
  }

  /* A long stream: order and no loss. */
  for (int i = 0; i < STREAM_MESSAGES; i++) {
    static char payload[9000];
    int size = (i * 37) % (int)sizeof payload;
    memset(payload, i & 0xff, (size_t)size);
    pvm_initsend(i % 2 ? PvmDataRaw : PvmDataDefault);
    pvm_pkint(&i, 1, 1);
    pvm_pkint(&size, 1, 1);
    pvm_pkbyte(payload, size, 1);
    pvm_send(a, TAG_STREAM);
  }

  /* A backlog, then the one message A asks for first. */
  for (int i = 0; i <= BACKLOG_MESSAGES; i++) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&i, 1, 1);
    pvm_send(a, i < BACKLOG_MESSAGES ? TAG_BACKLOG : TAG_BACKLOG_LAST);
  }

  /* pvm_psend of doubles. */
  double values[4] = {0.5, -1.25, 3e100, -7};
  pvm_psend(a, TAG_PSEND, values, 4, PVM_DOUBLE);

  /* Multicast to two LongPipe tasks and the plain one. */
  pvm_initsend(PvmDataDefault);
  pvm_pkstr("multicast payload");
  pvm_mcast(workers, WORKERS, TAG_MCAST);

  /* A message A will find with pvm_probe, then two for its message handler. */
  pvm_initsend(PvmDataDefault);
  int probe_value = 4242;
  pvm_pkint(&probe_value, 1, 1);
  pvm_send(a, TAG_PROBE);
  for (int h = 0; h < 2; h++) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&h, 1, 1);
    pvm_send(a, TAG_HANDLER);
  }

  /* A message in a new context: only a receive in that context gets it. */
  int context = pvm_newcontext();
  int old_context = pvm_setcontext(context);
  pvm_initsend(PvmDataDefault);
  pvm_pkint(&context, 1, 1);
  pvm_send(a, TAG_CONTEXT);
  pvm_setcontext(old_context);
  pvm_initsend(PvmDataDefault);
  pvm_pkint(&context, 1, 1);
  pvm_send(a, TAG_CONTEXT); /* tells A which context to look in */

  /* B's exit: its last words must come before the exit notification. */
  pvm_notify(PvmTaskExit, TAG_EXIT_NOTIFY, 1, &b);
  pvm_initsend(PvmDataDefault);
  pvm_send(b, TAG_GO);
  int words_mid = pvm_recv(-1, TAG_LAST_WORDS);
  char words[64];
  int words_source = 0;
  pvm_upkstr(words);
  pvm_bufinfo(words_mid, NULL, NULL, &words_source);
  printf("master: last words of B: %s (from B %d)\n", words, words_source == b);
  int notify_mid = pvm_recv(-1, TAG_EXIT_NOTIFY);
  int exited = 0;
  pvm_upkint(&exited, 1, 1);
  printf("master: exit notification for B %d\n", exited == b);
  (void)notify_mid;

  /* Reports of A and P (B sent its report before its last words). */
  for (int w = 0; w < WORKERS; w++) {
    int mid = pvm_recv(workers[w], TAG_REPORT);
    static char text[1 << 16];
    pvm_upkstr(text);
    printf("---- report of %s ----\n%s", names[w], text);
    (void)mid;
  }
  (void)p;
  printf("master: done\n");
  fflush(stdout);
  pvm_exit();
}

/* ---------------------------------------------------------------------------- workers */

/* Runs whenever a TAG_HANDLER message arrives, so it only records (the report's order stays fixed). */
static int handled = 0, handled_sum = 0;
static int on_handler_message(int mid) {
  int h = -1;
  pvm_upkint(&h, 1, 1);
  handled++;
  handled_sum += h + 1;
  (void)mid;
  return 0;
}

static void receive_encodings(int master_tid) {
  static double big[BIG_DOUBLES];
  for (int e = 0; e < 3; e++) {
    int mid = pvm_recv(-1, -1); /* both wildcards: arrival order */
    char what[32];
    snprintf(what, sizeof what, "encoding %d", e);
    describe(what, mid, master_tid);
    int ints[5], strided[3] = {0, 0, 0};
    short shorts[3] = {0, 0, 0};
    float f = 0;
    double d = 0;
    long l = 0;
    char odd[3], text[32] = "";
    int ok = pvm_upkint(ints, 5, 1) == 0 && pvm_upkbyte(odd, 3, 1) == 0;
    if (e != 2) {
      ok = ok && pvm_upkshort(shorts, 3, 1) == 0 && pvm_upkfloat(&f, 1, 1) == 0 && pvm_upkdouble(&d, 1, 1) == 0 &&
           pvm_upklong(&l, 1, 1) == 0 && pvm_upkstr(text) == 0 && pvm_upkint(strided, 3, 1) == 0;
    }
    ok = ok && pvm_upkdouble(big, BIG_DOUBLES, 1) == 0;
    for (int i = 0; i < BIG_DOUBLES; i++) ok = ok && big[i] == big_value(i, e);
    say("encoding %d: ints %d %d %d %d %d bytes %.3s shorts %d %d %d float %g double %g long %ld str '%s' "
        "strided %d %d %d big ok %d\n",
        e, ints[0], ints[1], ints[2], ints[3], ints[4], odd, shorts[0], shorts[1], shorts[2], f, d, l, text,
        strided[0], strided[1], strided[2], ok);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&ok, 1, 1);
    pvm_send(master_tid, TAG_ECHO);
  }
}

static void worker_a(int master_tid, int *workers) {
  pvm_addmhf(master_tid, TAG_HANDLER, -1, on_handler_message);
  int early_in_order = 1;
  for (int i = 0; i < EARLY_MESSAGES; i++) {
    int seq = -1;
    pvm_recv(master_tid, TAG_EARLY);
    pvm_upkint(&seq, 1, 1);
    early_in_order = early_in_order && seq == i;
  }
  say("early stream of %d: in order %d\n", EARLY_MESSAGES, early_in_order);
  receive_encodings(master_tid);

  /* Wildcards: tag 205 first, then any tag from the master (the oldest: 5), then tag 105 from anyone. */
  int t, mid;
  mid = pvm_recv(master_tid, TAG_WILD + 200);
  pvm_upkint(&t, 1, 1);
  describe("wild exact", mid, master_tid);
  mid = pvm_recv(master_tid, -1);
  pvm_upkint(&t, 1, 1);
  say("wild source-only got %d\n", t);
  mid = pvm_recv(-1, TAG_WILD + 100);
  pvm_upkint(&t, 1, 1);
  say("wild tag-only got %d\n", t);

  /* The stream. */
  int in_order = 1, intact = 1;
  for (int i = 0; i < STREAM_MESSAGES; i++) {
    static char payload[9000];
    int seq, size;
    pvm_recv(master_tid, TAG_STREAM);
    pvm_upkint(&seq, 1, 1);
    pvm_upkint(&size, 1, 1);
    pvm_upkbyte(payload, size, 1);
    in_order = in_order && seq == i;
    for (int k = 0; k < size; k++) intact = intact && payload[k] == (char)(seq & 0xff);
  }
  say("stream of %d: in order %d intact %d\n", STREAM_MESSAGES, in_order, intact);

  /* The last message first, from behind the whole backlog; then the backlog, still in order. */
  int last = -1;
  pvm_recv(master_tid, TAG_BACKLOG_LAST);
  pvm_upkint(&last, 1, 1);
  int backlog_in_order = 1;
  for (int i = 0; i < BACKLOG_MESSAGES; i++) {
    int seq = -1;
    pvm_recv(master_tid, TAG_BACKLOG);
    pvm_upkint(&seq, 1, 1);
    backlog_in_order = backlog_in_order && seq == i;
  }
  say("message behind a backlog of %d first: %d, backlog then in order %d\n", BACKLOG_MESSAGES, last,
      backlog_in_order);

  /* pvm_precv. */
  double values[8] = {0};
  int rtid = 0, rtag = 0, rlen = 0;
  int cc = pvm_precv(-1, TAG_PSEND, values, 8, PVM_DOUBLE, &rtid, &rtag, &rlen);
  say("precv cc %d from-master %d tag %d len %d values %g %g %g %g\n", cc, rtid == master_tid, rtag, rlen,
      values[0], values[1], values[2], values[3]);

  /* Multicast. */
  char text[64];
  mid = pvm_recv(-1, TAG_MCAST);
  pvm_upkstr(text);
  describe("mcast", mid, master_tid);
  say("mcast text '%s'\n", text);

  /* The plain task P: A sends to it, P answers. */
  pvm_initsend(PvmDataRaw);
  int question = 17;
  pvm_pkint(&question, 1, 1);
  pvm_send(workers[2], TAG_MIXED);
  mid = pvm_recv(workers[2], TAG_MIXED);
  int answer = 0;
  pvm_upkint(&answer, 1, 1);
  describe("mixed answer", mid, workers[2]);
  say("mixed answer %d\n", answer);

  /* Time-out: nothing will ever come with this tag. */
  struct timeval timeout = {0, 200000};
  say("trecv timeout returns %d\n", pvm_trecv(master_tid, TAG_NEVER, &timeout));
  struct timeval zero = {0, 0};
  say("trecv zero returns %d\n", pvm_trecv(master_tid, TAG_NEVER, &zero));

  /* Probe until it is there, then take it without blocking. */
  while ((mid = pvm_probe(master_tid, TAG_PROBE)) == 0) usleep(1000);
  describe("probe", mid, master_tid);
  mid = pvm_nrecv(master_tid, TAG_PROBE);
  int probe_value = 0;
  pvm_upkint(&probe_value, 1, 1);
  say("nrecv after probe got %d\n", probe_value);

  /* The message handler (installed at start) consumed the TAG_HANDLER messages as they came. */
  mid = pvm_recv(master_tid, TAG_CONTEXT); /* sent after the two handler messages */
  int context = 0;
  pvm_upkint(&context, 1, 1);
  say("handler count after later message %d sum %d, left for pvm_nrecv %d\n", handled, handled_sum,
      pvm_nrecv(master_tid, TAG_HANDLER) > 0);
  int old_context = pvm_setcontext(context);
  mid = pvm_recv(master_tid, TAG_CONTEXT);
  int inner = 0;
  pvm_upkint(&inner, 1, 1);
  say("context message found in its context %d\n", inner == context);
  pvm_setcontext(old_context);
}

static void worker_b(int master_tid) {
  char text[64];
  int mid = pvm_recv(-1, TAG_MCAST);
  pvm_upkstr(text);
  describe("mcast", mid, master_tid);
  say("mcast text '%s'\n", text);
}

static void worker_p(int master_tid, int *workers) {
  char text[64];
  int mid = pvm_recv(-1, TAG_MCAST);
  pvm_upkstr(text);
  describe("mcast", mid, master_tid);
  say("mcast text '%s'\n", text);
  mid = pvm_recv(workers[0], TAG_MIXED);
  int question = 0;
  pvm_upkint(&question, 1, 1);
  describe("mixed question", mid, workers[0]);
  int answer = question * 2;
  pvm_initsend(PvmDataDefault);
  pvm_pkint(&answer, 1, 1);
  pvm_send(workers[0], TAG_MIXED);
}

static void worker(const char *role) {
  int workers[WORKERS], master_tid;
  /* A starts late, after LongPipe's wait for a freshly spawned task's directory entry (2 s,
   * kSpawnedTaskStartWait) has run out: the master's first messages to A take the pvmd route, and the
   * early stream switches to LongPipe midway. B starts at once: its messages use LongPipe throughout. */
  if (strcmp(role, "A") == 0) sleep(A_START_DELAY_SECONDS);
  pvm_recv(-1, TAG_ROLE);
  pvm_upkint(workers, WORKERS, 1);
  pvm_upkint(&master_tid, 1, 1);
  if (master_tid != pvm_parent()) fail("parent");
  say("role %s\n", role);
  if (strcmp(role, "A") == 0) worker_a(master_tid, workers);
  if (strcmp(role, "B") == 0) worker_b(master_tid);
  if (strcmp(role, "P") == 0) worker_p(master_tid, workers);
  pvm_initsend(PvmDataDefault);
  pvm_pkstr(report);
  pvm_send(master_tid, TAG_REPORT);
  if (strcmp(role, "B") == 0) {
    pvm_recv(master_tid, TAG_GO);
    pvm_initsend(PvmDataDefault);
    pvm_pkstr("goodbye");
    pvm_send(master_tid, TAG_LAST_WORDS);
  }
  pvm_exit();
}

/* ---------------------------------------------------------------------------- vanish */

enum { VANISH_WAIT_SECONDS = 8 };

static void vanishing_worker(void) {
  pvm_initsend(PvmDataDefault);
  pvm_pkstr("ready");
  pvm_send(pvm_parent(), TAG_ROLE);
  for (;;) pause(); /* until killed */
}

static void vanish_master(char *self, char *host) {
  int victim;
  char *argv_v[] = {"worker", "V", NULL};
  if (pvm_mytid() < 0) fail("pvm_mytid");
  if (pvm_spawn(self, argv_v, host ? PvmTaskHost : PvmTaskDefault, host ? host : "", 1, &victim) != 1)
    fail("spawn V");
  char text[16];
  pvm_recv(victim, TAG_ROLE);
  pvm_upkstr(text);
  printf("vanish: worker says %s\n", text);
  for (int i = 0; i < 3; i++) { /* delivered */
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&i, 1, 1);
    pvm_send(victim, TAG_STREAM);
  }
  pvm_notify(PvmTaskExit, TAG_EXIT_NOTIFY, 1, &victim);
  printf("vanish: kill %d\n", pvm_kill(victim));
  pvm_recv(-1, TAG_EXIT_NOTIFY);
  printf("vanish: exit noticed\n");
  for (int i = 3; i < 6; i++) { /* to nobody: PVM drops them, LongPipe reports them lost */
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&i, 1, 1);
    printf("vanish: send to the vanished task returns %d\n", pvm_send(victim, TAG_STREAM) < 0 ? -1 : 0);
  }
  struct timeval wait = {VANISH_WAIT_SECONDS, 0};
  printf("vanish: nothing else arrives: %d\n", pvm_trecv(-1, TAG_NEVER, &wait));
  printf("vanish: done\n");
  fflush(stdout);
  pvm_exit();
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "worker") == 0 && strcmp(argv[2], "V") == 0) {
    vanishing_worker();
  } else if (argc >= 3 && strcmp(argv[1], "worker") == 0) {
    worker(argv[2]);
  } else if (argc >= 2 && strcmp(argv[1], "vanish") == 0) {
    vanish_master(argv[0], argc >= 3 ? argv[2] : NULL);
  } else {
    master(argv[0], argc >= 2 ? argv[1] : NULL);
  }
  return 0;
}
