// An outage for the fault tests (engine_itest.sh outage): attached as a tc ingress filter
// (clsact, direct action) to a site's link device, it drops every arriving packet, so the path
// answers nothing and refuses nothing, as in a rain fade or a handover; removing the qdisc ends it.
// Built at test time: clang -O2 -target bpf -c outage_drop.bpf.c (the kernel has no gact action).
__attribute__((section("classifier"), used)) int drop_every_packet(void* packet) {
  (void)packet;
  return 2;  // TC_ACT_SHOT
}
char kLicense[] __attribute__((section("license"), used)) = "GPL";
