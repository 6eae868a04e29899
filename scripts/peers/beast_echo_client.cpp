// A Boost.Beast WebSocket echo client for scripts/bench-peers.sh: the figures `tether-bench echo --url` prints,
// measured the same way against the same server, so that their ratio means something.
//
//   beast_echo_client HOST PORT PATH SECONDS
//   beast_echo_client HOST PORT PATH --round-trips N
//
// prints
//   beast.rtt_64b_per_s   sequential 64-byte binary round trips per second (send, read the echo, repeat) after a
//                         warm-up of 2,000 round trips or 1 s, whichever ends first
//   beast.mbps_1m         1 MiB binary messages echoed one at a time, after a warm-up of 20 (or 1 s); payload MB/s
//                         (10^6 bytes) in one direction
// The same payloads as tether-bench (byte i is i*7 and i*31, truncated), each measured for SECONDS on one
// connection, timed on a steady clock from the first round trip after the warm-up to the last one's end.
// With --round-trips N: exactly N 64-byte round trips, no warm-up and no 1 MiB run (what scripts/bench-counts.sh
// counts system calls and instructions over); prints beast.rtt_64b_per_s only.
//
// Beast as a C++ program that wants the fastest round trip would use it: a synchronous stream on a blocking socket
// (one thread, no event loop), TCP_NODELAY, permessage-deflate off, a 64 KiB write buffer (a 1 MiB message leaves
// as frames of that size), one flat read buffer reused for every message.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Run {
    long count;
    double seconds;
};

void round_trip(websocket::stream<tcp::socket>& ws, beast::flat_buffer& buffer, const std::vector<std::uint8_t>& message) {
    ws.write(asio::buffer(message));
    ws.read(buffer);
    if (buffer.size() != message.size() || !ws.got_binary()) {
        throw std::runtime_error("the server answered " + std::to_string(buffer.size()) + " B, not an echo of " +
                                 std::to_string(message.size()) + " B");
    }
    buffer.consume(buffer.size());
}

Run exact_round_trips(websocket::stream<tcp::socket>& ws, beast::flat_buffer& buffer,
                      const std::vector<std::uint8_t>& message, long count) {
    const auto start = Clock::now();
    for (long i = 0; i < count; ++i) round_trip(ws, buffer, message);
    return Run{count, std::chrono::duration<double>(Clock::now() - start).count()};
}

Run repeat_round_trips(websocket::stream<tcp::socket>& ws, beast::flat_buffer& buffer,
                       const std::vector<std::uint8_t>& message, int warm_up, double seconds) {
    const auto warm_up_end = Clock::now() + std::chrono::seconds(1);
    for (int i = 0; i < warm_up; ++i) {
        round_trip(ws, buffer, message);
        if (Clock::now() >= warm_up_end) break;
    }
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    long count = 0;
    auto now = start;
    do {
        round_trip(ws, buffer, message);
        ++count;
        now = Clock::now();
    } while (now < end);
    return Run{count, std::chrono::duration<double>(now - start).count()};
}

std::vector<std::uint8_t> payload(std::size_t size, unsigned factor) {
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::uint8_t>(i * factor);
    return bytes;
}

}  // namespace

int main(int argc, char** argv) {
    const bool exact = argc == 6 && std::string(argv[4]) == "--round-trips";
    if (argc != 5 && !exact) {
        std::fprintf(stderr, "usage: %s HOST PORT PATH SECONDS | HOST PORT PATH --round-trips N\n", argv[0]);
        return 2;
    }
    const std::string host = argv[1], port = argv[2], path = argv[3];
    const double seconds = exact ? 0 : std::atof(argv[4]);
    const long round_trips = exact ? std::atol(argv[5]) : 0;
    if (exact ? round_trips <= 0 : !(seconds > 0)) {
        std::fprintf(stderr, "beast_echo_client: bad SECONDS or N %s\n", argv[argc - 1]);
        return 2;
    }
    try {
        asio::io_context context;
        tcp::resolver resolver(context);
        websocket::stream<tcp::socket> ws(context);
        asio::connect(ws.next_layer(), resolver.resolve(host, port));
        ws.next_layer().set_option(tcp::no_delay(true));

        websocket::permessage_deflate deflate;
        deflate.client_enable = false;
        deflate.server_enable = false;
        ws.set_option(deflate);
        ws.write_buffer_bytes(64 * 1024);
        ws.read_message_max(64 * 1024 * 1024);
        ws.binary(true);
        ws.handshake(host + ":" + port, path);

        beast::flat_buffer buffer;
        const auto small = payload(64, 7);
        const Run rtt = exact ? exact_round_trips(ws, buffer, small, round_trips)
                              : repeat_round_trips(ws, buffer, small, 2000, seconds);
        std::printf("beast.rtt_64b_per_s %.0f\n", rtt.count / rtt.seconds);
        std::fflush(stdout);
        if (exact) {
            ws.close(websocket::close_code::normal);
            return 0;
        }

        const auto large = payload(1 << 20, 31);
        const Run mbps = repeat_round_trips(ws, buffer, large, 20, seconds);
        std::printf("beast.mbps_1m %.2f\n", mbps.count * double(large.size()) / mbps.seconds / 1e6);
        std::fflush(stdout);

        // Sends the close frame and reads until the server's answers it.
        ws.close(websocket::close_code::normal);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "beast_echo_client: %s\n", error.what());
        return 1;
    }
    return 0;
}
