#include "stats/stats.h"

#include <cstdio>

#include <sstream>

namespace lp {
namespace {

double to_ms(ArqDuration d) { return static_cast<double>(d.count()) / 1000.0; }

const char* json_bool(bool value) { return value ? "true" : "false"; }

void write_session(std::ostream& out, const SessionReport& session) {
  const SessionStatistics& s = session.statistics;
  const ArqStats& a = s.arq;
  out << "{\"peer\":" << json_string(session.peer) << ",\"connected\":" << json_bool(s.connected)
      << ",\"failure\":" << (session.failure ? json_string(*session.failure) : "null")
      << ",\"streams\":" << s.streams << ",\"messages_sent\":" << a.messages_sent << ",\"bytes_sent\":" << a.bytes_sent
      << ",\"messages_received\":" << s.messages_received << ",\"bytes_received\":" << s.bytes_received
      << ",\"messages_retransmitted\":" << a.messages_retransmitted
      << ",\"bytes_retransmitted\":" << a.bytes_retransmitted << ",\"messages_acked\":" << a.messages_acked
      << ",\"duplicates_dropped\":" << a.duplicates_dropped << ",\"rtt_ms\":" << to_ms(a.srtt)
      << ",\"rttvar_ms\":" << to_ms(a.rttvar) << ",\"rtt_samples\":" << a.rtt_samples
      << ",\"in_flight_messages\":" << a.in_flight_messages << ",\"in_flight_bytes\":" << a.in_flight_bytes
      << ",\"window_messages\":" << a.send_window_messages << ",\"window_bytes\":" << a.send_window_bytes
      << ",\"peer_window_messages\":" << a.peer_window_messages << ",\"queued_messages\":" << session.queued_messages
      << ",\"dropped_by_policy\":" << s.dropped_by_policy << ",\"connections_established\":"
      << s.connections_established << ",\"reconnects\":" << s.reconnects << ",\"carrier_resets\":" << a.carrier_resets
      << ",\"connect_failures\":" << s.connect_failures
      << ",\"last_connection_error\":" << json_string(s.last_connection_error) << ",\"path_probes\":" << s.path_probes
      << ",\"spill_streams\":" << s.spill_streams << ",\"spilled_messages\":" << s.spilled_messages
      << ",\"early_messages\":" << s.early_messages
      << ",\"datagram_reseals\":" << s.datagram_reseals
      << ",\"engine_stalls\":" << s.engine_stalls << ",\"rejected_connections\":" << s.rejected_connections
      << ",\"malformed_frames\":" << s.malformed_frames << ",\"refused_frames\":" << s.refused_frames
      << ",\"identity_refused\":" << s.identity_refused << ",\"protection\":" << json_string(s.protection)
      << ",\"fast_open\":{\"syn_data\":" << s.fast_open_syn_data << ",\"accepted\":" << s.fast_open_accepted << "}"
      << ",\"tcp\":{\"snd_wscale\":" << s.tcp.snd_wscale
      << ",\"rcv_wscale\":" << s.tcp.rcv_wscale << ",\"snd_cwnd\":" << s.tcp.snd_cwnd
      << ",\"snd_mss\":" << s.tcp.snd_mss << ",\"rtt_ms\":" << s.tcp.rtt_us / 1000.0
      << ",\"total_retrans\":" << s.tcp.total_retrans << ",\"send_buffer\":" << s.tuning.send_buffer
      << ",\"receive_buffer\":" << s.tuning.receive_buffer << ",\"congestion\":" << json_string(s.tuning.congestion)
      << ",\"note\":" << json_string(s.tuning.note) << "}";
  const PathStatistics& p = s.path;
  out << ",\"path\":{\"handshake_rtt_ms\":" << p.handshake_rtt_ms << ",\"min_rtt_ms\":" << p.min_rtt_ms
      << ",\"smoothed_rtt_ms\":" << p.smoothed_rtt_ms << ",\"rate_mbit\":" << p.rate_mbit
      << ",\"pipe_full\":" << json_bool(p.pipe_full) << ",\"measured_buffers\":" << json_bool(p.measured_buffers)
      << ",\"send_buffer\":" << p.send_buffer << ",\"receive_buffer\":" << p.receive_buffer
      << ",\"kernel_send_buffer\":" << p.kernel_send_buffer << ",\"kernel_receive_buffer\":" << p.kernel_receive_buffer
      << ",\"max_cwnd\":" << p.max_cwnd << ",\"warm_start\":" << json_string(p.warm_start)
      << ",\"warm_start_rtt_ms\":" << p.warm_start_rtt_ms << "}";
  const DatagramStatistics& d = s.datagram;
  out << ",\"carrier\":" << (d.used ? "\"udp\"" : "\"tcp\"");
  if (d.used) {
    out << ",\"datagram\":{\"datagrams_sent\":" << d.datagrams_sent << ",\"datagrams_received\":" << d.datagrams_received
        << ",\"pacer_phase\":" << json_string(d.pacer_phase) << ",\"warm_start\":" << json_string(d.warm_start)
        << ",\"start_jump\":" << json_string(d.start_jump) << ",\"train_rate_mbit\":" << d.train_rate_mbit
        << ",\"trains\":" << d.trains << ",\"train_refusals\":{";
    for (std::size_t i = 0; i < d.train_refusals.size(); ++i) {
      out << (i ? "," : "") << json_string(d.train_refusals[i].first) << ":" << d.train_refusals[i].second;
    }
    out << "}"
        << ",\"pacing_rate_mbit\":" << d.pacing_rate_mbit
        << ",\"bandwidth_mbit\":" << d.bandwidth_mbit << ",\"window_bytes\":" << d.window_bytes
        << ",\"min_rtt_ms\":" << d.min_rtt_ms << ",\"lost_datagrams\":" << d.lost_datagrams
        << ",\"backoffs_for_delay\":" << d.backoffs_for_delay << ",\"backoffs_for_loss\":" << d.backoffs_for_loss
        << ",\"in_flight_bytes\":" << d.in_flight_bytes << ",\"timeouts\":" << d.timeouts
        << ",\"pacing_behind_ms\":" << d.pacing_behind_ms << ",\"pacing_caught_up_ms\":" << d.pacing_caught_up_ms
        << ",\"repairs_sent\":" << d.repairs_sent
        << ",\"repairs_received\":" << d.repairs_received << ",\"units_recovered\":" << d.units_recovered
        << ",\"burst_tails\":" << d.burst_tails << ",\"burst_tail_ms\":" << d.burst_tail_ms << "}";
  }
  out << "}";
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string to_json(const EngineReport& report) {
  const SocketTuning& listen = report.listen_tuning;
  std::ostringstream out;
  out << "{\"longpipe_version\":" << json_string(LONGPIPE_VERSION)
      << ",\"local_endpoint\":" << json_string(report.local_endpoint)
      << ",\"progress_thread\":" << json_string(report.progress_thread)
      << ",\"progress_wakeups\":" << report.progress_wakeups
      << ",\"listen_socket\":{\"requested_receive_buffer\":" << listen.requested_receive
      << ",\"requested_send_buffer\":" << listen.requested_send << ",\"send_buffer\":" << listen.send_buffer
      << ",\"receive_buffer\":" << listen.receive_buffer << ",\"forced\":" << json_bool(listen.forced)
      << ",\"congestion\":" << json_string(listen.congestion) << ",\"note\":" << json_string(listen.note)
      << "},\"accepted_connections\":" << report.endpoint.accepted
      << ",\"rejected_connections\":" << report.endpoint.rejected
      << ",\"malformed_frames\":" << report.endpoint.malformed << ",\"refused_busy\":" << report.endpoint.refused_busy
      << ",\"refused_frames\":" << report.endpoint.refused_frames
      << ",\"identity_refused\":" << report.endpoint.identity_refused
      << ",\"sessions_replaced\":" << report.endpoint.sessions_replaced
      << ",\"accepted_by_alias\":" << report.endpoint.accepted_by_alias
      << ",\"held_datagrams\":{\"held\":" << report.endpoint.held_datagrams
      << ",\"released\":" << report.endpoint.held_datagrams_released
      << ",\"expired\":" << report.endpoint.held_datagrams_expired
      << ",\"overflowed\":" << report.endpoint.held_datagrams_overflowed << "}"
      << ",\"engine_stalls\":" << report.endpoint.engine_stalls
      << ",\"longest_late_wake_ms\":" << report.endpoint.longest_late_wake_ms
      << ",\"receive_queue_messages\":" << report.receive_queue_messages << ",\"path_cache\":{\"file\":"
      << json_string(report.endpoint.path_cache_file) << ",\"entries\":" << report.endpoint.path_cache_entries
      << ",\"corrupt_lines\":" << report.endpoint.path_cache_corrupt_lines
      << ",\"expired_lines\":" << report.endpoint.path_cache_expired_lines
      << ",\"warm_starts_used\":" << report.endpoint.warm_starts_used
      << ",\"warm_starts_rejected\":" << report.endpoint.warm_starts_rejected
      << ",\"saved\":" << report.endpoint.path_cache_saved
      << ",\"error\":" << json_string(report.endpoint.path_cache_error) << "},\"sessions\":[";
  bool first = true;
  for (const SessionReport& session : report.sessions) {
    if (!first) out << ",";
    write_session(out, session);
    first = false;
  }
  out << "]}";
  return out.str();
}

}  // namespace lp
