// The bare C reference for scripts/bench-counts.sh and `tether-bench idle`: a WebSocket client with no library, doing
// only what the work needs, so that a client's cost can be read as a ratio to the floor of the same work on the same
// machine in the same run.
//
//   bare_c_client echo URL ROUND_TRIPS [blocking|epoll|uring]
//       one connection; ROUND_TRIPS sequential 64-byte binary round trips (masked frame out, its echo in); prints
//       c.round_trips, c.rtt_64b_per_s and c.cpu_us_per_rt. blocking: a write and a blocking read per round trip
//       (Beast's shape); epoll (the default): a non-blocking socket, a write, an epoll_wait that sleeps until the echo
//       is there, one read (an event loop's shape); uring: a completion-based loop, the send and the next receive
//       submitted together and waited for in one io_uring_enter.
//   bare_c_client idle URL CONNECTIONS SECONDS [epoll|uring]
//       CONNECTIONS connections (epoll, the default: one epoll loop), each sending a ping one second after its
//       previous pong with a 10 ms timer tick: a wheel of 10 ms slots, the loop sleeping until the next slot that
//       holds a ping, the pings due in one slot going out together (1 to 1.01 s after the pong, as a 10 ms timer
//       tolerance lets them); one write per ping, one read per pong. Holds for SECONDS once all are open and prints
//       c.connections, c.pongs (during the hold), c.pongs_total (since the first ping: for counts per cycle),
//       c.cpu_percent (this process, user + system, over the hold's wall time, % of one core). uring: the same work
//       on io_uring, each connection's receive always outstanding, a turn's pings and re-armed receives submitted in
//       the one io_uring_enter that waits (until the next slot, or a completion).
//   bare_c_client uring-probe
//       prints c.uring_available 1 when the kernel lets this process set up an io_uring (0, and why, when not).
//
// URL is ws://HOST:PORT/PATH with a numeric IPv4 host. The opening handshake is checked for its 101 status only: the
// reference measures the steady state, not the handshake. Every frame the client sends is masked with a key of its
// own (a cheap generator, not a secure one: a reference, not a client to use).
//
// Built by scripts/bench-counts.sh and by `tether-bench idle`: cc -O2 -o bare_c_client bare_c_client.c
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#define HAVE_IO_URING 1
#endif

static void fail(const char *what) {
    fprintf(stderr, "bare_c_client: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static uint32_t mask_state = 0x9e3779b9u;
static uint32_t next_mask(void) {  // xorshift32
    mask_state ^= mask_state << 13;
    mask_state ^= mask_state >> 17;
    mask_state ^= mask_state << 5;
    return mask_state;
}

// A client frame (FIN, `opcode`, masked) of `length` < 126 bytes of `payload` into `frame`; returns its size.
static size_t encode(uint8_t *frame, uint8_t opcode, const uint8_t *payload, size_t length) {
    uint32_t key = next_mask();
    frame[0] = 0x80 | opcode;
    frame[1] = 0x80 | (uint8_t)length;
    memcpy(frame + 2, &key, 4);
    for (size_t i = 0; i < length; i++) frame[6 + i] = payload[i] ^ frame[2 + i % 4];
    return 6 + length;
}

struct endpoint {
    struct sockaddr_in address;
    char host[64];
    char path[256];
};

static struct endpoint parse_url(const char *url) {
    struct endpoint endpoint = {.address = {.sin_family = AF_INET}};
    int port = 0, consumed = 0;
    if (sscanf(url, "ws://%63[0-9.]:%d%n", endpoint.host, &port, &consumed) != 2 || port <= 0 || port > 65535 ||
        inet_pton(AF_INET, endpoint.host, &endpoint.address.sin_addr) != 1) {
        fprintf(stderr, "bare_c_client: %s is not ws://IPv4:PORT/PATH\n", url);
        exit(2);
    }
    endpoint.address.sin_port = htons((uint16_t)port);
    snprintf(endpoint.path, sizeof endpoint.path, "%s", url[consumed] ? url + consumed : "/");
    return endpoint;
}

// A blocking TCP connection (TCP_NODELAY) that has completed the opening handshake.
static int open_websocket(const struct endpoint *endpoint) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)&endpoint->address, sizeof endpoint->address) != 0) fail("connect");
    char request[512];
    int length = snprintf(request, sizeof request,
                          "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                          endpoint->path, endpoint->host, ntohs(endpoint->address.sin_port));
    if (write(fd, request, (size_t)length) != length) fail("write (handshake)");
    // The server sends nothing after its answer until the client speaks, so what is read up to the blank line is
    // the answer alone.
    char answer[1024];
    size_t have = 0;
    while (have < 4 || memmem(answer, have, "\r\n\r\n", 4) == NULL) {
        ssize_t count = read(fd, answer + have, sizeof answer - 1 - have);
        if (count <= 0) fail("read (handshake)");
        have += (size_t)count;
    }
    if (strncmp(answer, "HTTP/1.1 101", 12) != 0) {
        errno = 0;
        fail("the server refused the upgrade");
    }
    return fd;
}

// ---- echo ----

static void check_echo(const uint8_t *echoed) {
    if (echoed[0] != 0x82 || echoed[1] != 64) {
        errno = 0;
        fail("not an echo");
    }
}

static int echo_uring(int fd, long round_trips, const uint8_t *payload, uint8_t *frame, uint8_t *echoed);

static int echo(const struct endpoint *endpoint, long round_trips, const char *mode) {
    int use_epoll = strcmp(mode, "epoll") == 0, use_uring = strcmp(mode, "uring") == 0;
    if (!use_epoll && !use_uring && strcmp(mode, "blocking") != 0) {
        fprintf(stderr, "bare_c_client: echo mode %s is not blocking, epoll or uring\n", mode);
        exit(2);
    }
    int fd = open_websocket(endpoint);
    int epoll = -1;
    if (use_epoll) {
        if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) fail("fcntl");
        epoll = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
        if (epoll < 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) != 0) fail("epoll");
    }
    uint8_t payload[64], frame[70], echoed[66];
    for (int i = 0; i < 64; i++) payload[i] = (uint8_t)(i * 7);
    double start = now_seconds(), cpu_start = cpu_seconds();
    if (use_uring) {
#ifdef HAVE_IO_URING
        echo_uring(fd, round_trips, payload, frame, echoed);
#else
        fprintf(stderr, "bare_c_client: built without <linux/io_uring.h>\n");
        exit(2);
#endif
    }
    for (long n = 0; n < round_trips && !use_uring; n++) {
        size_t size = encode(frame, 0x2, payload, sizeof payload);
        if (write(fd, frame, size) != (ssize_t)size) fail("write");
        // The echo: a 2-byte header and 64 bytes, unmasked; one read takes it all unless the segment was split.
        size_t have = 0;
        while (have < sizeof echoed) {
            if (use_epoll) {
                struct epoll_event event;
                if (epoll_wait(epoll, &event, 1, -1) < 0 && errno != EINTR) fail("epoll_wait");
            }
            ssize_t count = read(fd, echoed + have, sizeof echoed - have);
            if (count > 0) {
                have += (size_t)count;
            } else if (count == 0 || (errno != EAGAIN && errno != EINTR)) {
                fail("read");
            }
        }
        check_echo(echoed);
    }
    double elapsed = now_seconds() - start, cpu = cpu_seconds() - cpu_start;
    printf("c.round_trips %ld\nc.rtt_64b_per_s %.0f\nc.cpu_us_per_rt %.2f\n", round_trips, round_trips / elapsed,
           cpu / round_trips * 1e6);
    close(fd);
    return 0;
}

// ---- io_uring, by its system calls (no liburing) ----

#ifdef HAVE_IO_URING
struct ring {
    int fd;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    unsigned pending;  // SQEs queued since the last enter
};

// Sets up a ring of `entries` (a single issuer whose completions run when it waits, as a loop thread would use it);
// returns -1 with errno when the kernel refuses.
static int ring_setup(struct ring *ring, unsigned entries) {
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    ring->fd = (int)syscall(__NR_io_uring_setup, entries, &params);
    if (ring->fd < 0) {
        memset(&params, 0, sizeof params);  // an older kernel: without the flags
        ring->fd = (int)syscall(__NR_io_uring_setup, entries, &params);
        if (ring->fd < 0) return -1;
    }
    if (!(params.features & IORING_FEAT_SINGLE_MMAP)) {
        errno = ENOSYS;
        return -1;
    }
    size_t sq_size = params.sq_off.array + params.sq_entries * sizeof(unsigned);
    size_t cq_size = params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe);
    size_t size = sq_size > cq_size ? sq_size : cq_size;
    uint8_t *rings = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->fd, IORING_OFF_SQ_RING);
    ring->sqes = mmap(NULL, params.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_POPULATE, ring->fd, IORING_OFF_SQES);
    if (rings == MAP_FAILED || ring->sqes == MAP_FAILED) return -1;
    ring->sq_tail = (unsigned *)(rings + params.sq_off.tail);
    ring->sq_mask = (unsigned *)(rings + params.sq_off.ring_mask);
    ring->sq_array = (unsigned *)(rings + params.sq_off.array);
    ring->cq_head = (unsigned *)(rings + params.cq_off.head);
    ring->cq_tail = (unsigned *)(rings + params.cq_off.tail);
    ring->cq_mask = (unsigned *)(rings + params.cq_off.ring_mask);
    ring->cqes = (struct io_uring_cqe *)(rings + params.cq_off.cqes);
    ring->pending = 0;
    return 0;
}

static struct io_uring_sqe *ring_queue(struct ring *ring, uint8_t opcode, int fd, void *buffer, unsigned length,
                                       uint64_t user_data) {
    unsigned tail = *ring->sq_tail, index = tail & *ring->sq_mask;
    struct io_uring_sqe *sqe = &ring->sqes[index];
    memset(sqe, 0, sizeof *sqe);
    sqe->opcode = opcode;
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)buffer;
    sqe->len = length;
    sqe->user_data = user_data;
    ring->sq_array[index] = index;
    __atomic_store_n(ring->sq_tail, tail + 1, __ATOMIC_RELEASE);
    ring->pending++;
    return sqe;
}

// Submits what is queued and waits for at least `wait` completions, at most `timeout` seconds when it is not
// negative: one system call.
static void ring_enter(struct ring *ring, unsigned wait, double timeout) {
    struct __kernel_timespec limit = {.tv_sec = (long long)timeout,
                                      .tv_nsec = (long long)((timeout - (double)(long long)timeout) * 1e9)};
    struct io_uring_getevents_arg argument = {.ts = (uint64_t)(uintptr_t)&limit};
    unsigned flags = IORING_ENTER_GETEVENTS | (timeout >= 0 ? IORING_ENTER_EXT_ARG : 0);
    long result = syscall(__NR_io_uring_enter, ring->fd, ring->pending, wait, flags,
                          timeout >= 0 ? (void *)&argument : NULL, timeout >= 0 ? sizeof argument : 0);
    if (result < 0 && errno != ETIME && errno != EINTR) fail("io_uring_enter");
    ring->pending = 0;  // submitted even when the wait timed out
}

// The next completion, or NULL; `ring_seen` then hands its slot back.
static struct io_uring_cqe *ring_peek(struct ring *ring) {
    unsigned head = *ring->cq_head;
    if (head == __atomic_load_n(ring->cq_tail, __ATOMIC_ACQUIRE)) return NULL;
    return &ring->cqes[head & *ring->cq_mask];
}

static void ring_seen(struct ring *ring) {
    __atomic_store_n(ring->cq_head, *ring->cq_head + 1, __ATOMIC_RELEASE);
}

static int echo_uring(int fd, long round_trips, const uint8_t *payload, uint8_t *frame, uint8_t *echoed) {
    struct ring ring;
    if (ring_setup(&ring, 8) != 0) fail("io_uring_setup");
    for (long n = 0; n < round_trips; n++) {
        size_t size = encode(frame, 0x2, payload, 64);
        // The send (no completion unless it fails) and the receive of the echo, in one enter that waits for it.
        ring_queue(&ring, IORING_OP_SEND, fd, frame, (unsigned)size, 1)->flags = IOSQE_CQE_SKIP_SUCCESS;
        size_t have = 0;
        while (have < 66) {
            ring_queue(&ring, IORING_OP_RECV, fd, echoed + have, (unsigned)(66 - have), 2);
            ring_enter(&ring, 1, -1);
            struct io_uring_cqe *cqe;
            while ((cqe = ring_peek(&ring)) != NULL) {
                if (cqe->res <= 0) {
                    errno = cqe->res < 0 ? -cqe->res : 0;
                    fail(cqe->user_data == 1 ? "send" : "recv");
                }
                if (cqe->user_data == 2) have += (size_t)cqe->res;
                ring_seen(&ring);
            }
        }
        check_echo(echoed);
    }
    close(ring.fd);
    return 0;
}
#endif

// ---- idle ----

enum { TICK_MS = 10, SLOTS = 1024, INTERVAL_TICKS = 1000 / TICK_MS };

// The connections and the timer wheel: each slot lists the connections whose ping is due in that 10 ms.
struct idle_state {
    int count;
    int *fds;
    int *next;  // the next connection in the same slot, or -1
    int wheel[SLOTS];  // the first connection due in each slot, or -1
    double origin;  // tick 0
    long tick;  // the first slot not yet sent
    long pongs, pongs_total;
    double hold_end;
    uint8_t frame[14];
};

static long current_tick(const struct idle_state *state, double now) {
    return (long)((now - state->origin) * 1000 / TICK_MS);
}

// The slot of a ping due one interval after `now`: the first that starts no earlier (so it goes 1 to 1.01 s after
// `now`, as a 10 ms timer tolerance lets a ping go late, never early).
static long due_tick(const struct idle_state *state, double now) {
    return current_tick(state, now) + 1 + INTERVAL_TICKS;
}

static void schedule_ping(struct idle_state *state, int connection, long due) {
    state->next[connection] = state->wheel[due % SLOTS];
    state->wheel[due % SLOTS] = connection;
}

// Opens every connection, each's first ping one interval later.
static void open_all(struct idle_state *state, const struct endpoint *endpoint, int count) {
    state->count = count;
    state->fds = calloc((size_t)count, sizeof(int));
    state->next = calloc((size_t)count, sizeof(int));
    if (!state->fds || !state->next) fail("calloc");
    for (int i = 0; i < SLOTS; i++) state->wheel[i] = -1;
    state->origin = now_seconds();
    state->tick = 0;
    for (int i = 0; i < count; i++) {
        state->fds[i] = open_websocket(endpoint);
        long due = due_tick(state, now_seconds());
        if (due >= SLOTS) {  // the wheel holds 10 s: opening must not take longer
            errno = 0;
            fail("opening the connections took longer than the timer wheel holds");
        }
        schedule_ping(state, i, due);
    }
}

// The next slot that holds a ping, as a time, at most the hold's end.
static double next_wake(const struct idle_state *state) {
    long next = state->tick;
    while (next < state->tick + SLOTS && state->wheel[next % SLOTS] < 0) next++;
    double wake = next * TICK_MS / 1000.0 + state->origin;
    return wake < state->hold_end ? wake : state->hold_end;
}

// A pong arrived at `now`: counts it and schedules the connection's next ping one interval later.
static void pong_received(struct idle_state *state, int connection, double now) {
    state->pongs_total++;
    if (now < state->hold_end) state->pongs++;
    schedule_ping(state, connection, due_tick(state, now));
}

// Takes the connections of every slot whose time has come; `send` gets each with its ping frame.
typedef void ping_sender(struct idle_state *state, int connection, size_t size, void *context);

static void send_due_pings(struct idle_state *state, double now, ping_sender *send, void *context) {
    long current = current_tick(state, now);
    uint8_t payload[8];
    for (; state->tick <= current; state->tick++) {
        int i = state->wheel[state->tick % SLOTS];
        state->wheel[state->tick % SLOTS] = -1;
        while (i >= 0) {
            int after = state->next[i];
            memcpy(payload, &state->tick, sizeof payload);
            send(state, i, encode(state->frame, 0x9, payload, sizeof payload), context);
            i = after;
        }
    }
}

static void report_idle(const struct idle_state *state, double hold_start, double cpu_start) {
    double wall = now_seconds() - hold_start, cpu = cpu_seconds() - cpu_start;
    printf("c.connections %d\nc.pongs %ld\nc.pongs_total %ld\nc.cpu_percent %.2f\n", state->count, state->pongs,
           state->pongs_total, cpu / wall * 100);
}

static void write_ping(struct idle_state *state, int connection, size_t size, void *context) {
    (void)context;
    if (write(state->fds[connection], state->frame, size) != (ssize_t)size) fail("write (ping)");
}

static int idle_epoll(const struct endpoint *endpoint, int count, int seconds) {
    static struct idle_state state;
    open_all(&state, endpoint, count);
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) fail("epoll_create1");
    for (int i = 0; i < count; i++) {
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (fcntl(state.fds[i], F_SETFL, O_NONBLOCK) != 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, state.fds[i], &event))
            fail("epoll_ctl");
    }
    double hold_start = now_seconds(), cpu_start = cpu_seconds();
    state.hold_end = hold_start + seconds;
    struct epoll_event events[256];
    uint8_t pong[64];
    for (double now = hold_start; now < state.hold_end; ) {
        double wake = next_wake(&state);
        int ready = epoll_wait(epoll, events, 256, wake > now ? (int)((wake - now) * 1000 + 0.999) : 0);
        if (ready < 0 && errno != EINTR) fail("epoll_wait");
        now = now_seconds();
        for (int e = 0; e < ready; e++) {
            int i = (int)events[e].data.u32;
            // One read per pong: the server's pong (2-byte header, the 8-byte payload) arrives whole.
            ssize_t got = read(state.fds[i], pong, sizeof pong);
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) fail("read (pong)");
            if (got >= 2 && (pong[0] & 0x0f) == 0xA) pong_received(&state, i, now);
        }
        send_due_pings(&state, now, write_ping, NULL);
    }
    report_idle(&state, hold_start, cpu_start);
    return 0;
}

#ifdef HAVE_IO_URING
// A ping's user_data (it has no completion unless it fails); a receive's is its connection's index.
#define URING_SEND ((uint64_t)1 << 32)

struct uring_idle {
    struct ring ring;
    uint8_t (*pongs)[16];  // each connection's receive buffer
    uint8_t (*pings)[14];  // each connection's ping in flight (the send reads it after the enter)
};

static void queue_ping(struct idle_state *state, int connection, size_t size, void *context) {
    struct uring_idle *uring = context;
    memcpy(uring->pings[connection], state->frame, size);
    struct io_uring_sqe *sqe = ring_queue(&uring->ring, IORING_OP_SEND, state->fds[connection],
                                          uring->pings[connection], (unsigned)size, URING_SEND);
    sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
}

static int idle_uring(const struct endpoint *endpoint, int count, int seconds) {
    static struct idle_state state;
    static struct uring_idle uring;
    open_all(&state, endpoint, count);
    unsigned entries = 1;
    while (entries < 2 * (unsigned)count + 8) entries <<= 1;
    if (ring_setup(&uring.ring, entries) != 0) fail("io_uring_setup");
    uring.pongs = calloc((size_t)count, sizeof *uring.pongs);
    uring.pings = calloc((size_t)count, sizeof *uring.pings);
    if (!uring.pongs || !uring.pings) fail("calloc");
    for (int i = 0; i < count; i++) ring_queue(&uring.ring, IORING_OP_RECV, state.fds[i], uring.pongs[i], 16, i);
    double hold_start = now_seconds(), cpu_start = cpu_seconds();
    state.hold_end = hold_start + seconds;
    for (double now = hold_start; now < state.hold_end; ) {
        double wake = next_wake(&state);
        ring_enter(&uring.ring, 1, wake > now ? wake - now : 0);
        now = now_seconds();
        struct io_uring_cqe *cqe;
        while ((cqe = ring_peek(&uring.ring)) != NULL) {
            uint64_t data = cqe->user_data;
            int result = cqe->res;
            ring_seen(&uring.ring);
            if (data == URING_SEND || result <= 0) {  // a send that failed, or a receive that did
                errno = result < 0 ? -result : 0;
                fail("io_uring send or receive");
            }
            int i = (int)data;
            if (result >= 2 && (uring.pongs[i][0] & 0x0f) == 0xA) pong_received(&state, i, now);
            ring_queue(&uring.ring, IORING_OP_RECV, state.fds[i], uring.pongs[i], 16, (uint64_t)i);
        }
        send_due_pings(&state, now, queue_ping, &uring);
    }
    report_idle(&state, hold_start, cpu_start);
    return 0;
}
#endif

int main(int argc, char **argv) {
    const char *mode;
    if (argc >= 2 && strcmp(argv[1], "uring-probe") == 0) {
#ifdef HAVE_IO_URING
        struct ring ring;
        if (ring_setup(&ring, 8) == 0) {
            printf("c.uring_available 1\n");
            return 0;
        }
        fprintf(stderr, "bare_c_client: io_uring_setup: %s\n", strerror(errno));
#else
        fprintf(stderr, "bare_c_client: built without <linux/io_uring.h>\n");
#endif
        printf("c.uring_available 0\n");
        return 0;
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "echo") == 0) {
        struct endpoint endpoint = parse_url(argv[2]);
        mode = argc == 5 ? argv[4] : "epoll";
        return echo(&endpoint, atol(argv[3]), mode);
    }
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "idle") == 0) {
        struct endpoint endpoint = parse_url(argv[2]);
        mode = argc == 6 ? argv[5] : "epoll";
        if (strcmp(mode, "epoll") == 0) return idle_epoll(&endpoint, atoi(argv[3]), atoi(argv[4]));
#ifdef HAVE_IO_URING
        if (strcmp(mode, "uring") == 0) return idle_uring(&endpoint, atoi(argv[3]), atoi(argv[4]));
#endif
    }
    fprintf(stderr, "usage: bare_c_client echo URL ROUND_TRIPS [blocking|epoll|uring] | "
                    "idle URL CONNECTIONS SECONDS [epoll|uring] | uring-probe\n");
    return 2;
}
