/* The least a line can take on this machine from one viewer's stdin to the others' stdout: the
 * bare pipeline with none of Huddle in it, for the delivery figure's floor (bench/floor.py).
 *
 *   floor writer PORT...   reads lines from stdin; each is signed (Ed25519, OpenSSL) and sent in
 *                          one UDP datagram to each 127.0.0.1:PORT, from this one thread
 *   floor reader PORT      receives on 127.0.0.1:PORT; each datagram's signature is checked and
 *                          its line written to stdout as "LINE MICROSECONDS" (the wall clock just
 *                          before the write)
 *
 * One thread a process, no queue, no store, no hop: what is left is the kernel's hand-overs
 * between processes, one signature made and one checked per reader. With FLOOR_HANDOVERS=1 in
 * the environment, each process hands every line between threads as a node does, and no more:
 * the writer's input thread to the thread that signs and sends; the reader's socket thread to
 * the thread that checks, and that one to the thread that prints (a mutex and a condition
 * variable each, as a queue between threads is). Built by floor.py; never linked into Huddle. */
#include <openssl/evp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

enum { signature_bytes = 64, most_readers = 16, most_bytes = 4096 };

/* One line at a time from one thread to the next, as the node's queues between threads do. */
struct handover {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    unsigned char bytes[most_bytes + signature_bytes];
    size_t length;
    int full;
    void (*take)(unsigned char *bytes, size_t length);
    struct handover *next;
};

static void hand(struct handover *to, const unsigned char *bytes, size_t length) {
    pthread_mutex_lock(&to->lock);
    while (to->full) pthread_cond_wait(&to->ready, &to->lock);
    memcpy(to->bytes, bytes, length);
    to->length = length;
    to->full = 1;
    pthread_cond_broadcast(&to->ready);
    pthread_mutex_unlock(&to->lock);
}

static void *run_handover(void *argument) {
    struct handover *from = argument;
    unsigned char bytes[most_bytes + signature_bytes];
    for (;;) {
        pthread_mutex_lock(&from->lock);
        while (!from->full) pthread_cond_wait(&from->ready, &from->lock);
        size_t length = from->length;
        memcpy(bytes, from->bytes, length);
        from->full = 0;
        pthread_cond_broadcast(&from->ready);
        pthread_mutex_unlock(&from->lock);
        from->take(bytes, length);
    }
    return NULL;
}

static struct handover *start_handover(void (*take)(unsigned char *, size_t)) {
    struct handover *queue = calloc(1, sizeof *queue);
    pthread_mutex_init(&queue->lock, NULL);
    pthread_cond_init(&queue->ready, NULL);
    queue->take = take;
    pthread_t thread;
    pthread_create(&thread, NULL, run_handover, queue);
    return queue;
}

static long long wall_microseconds(void) {
    struct timeval now;
    gettimeofday(&now, NULL);
    return now.tv_sec * 1000000LL + now.tv_usec;
}

static struct sockaddr_in loopback(int port) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

static EVP_PKEY *key;
static int udp, readers;
static struct sockaddr_in to[most_readers];
static struct handover *signing, *checking, *printing;

static void sign_and_send(unsigned char *line, size_t length) {
    unsigned char datagram[most_bytes + signature_bytes];
    size_t signed_bytes = signature_bytes;
    memcpy(datagram, line, length);
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (EVP_DigestSignInit(context, NULL, NULL, NULL, key) != 1 ||
        EVP_DigestSign(context, datagram + length, &signed_bytes, datagram, length) != 1) exit(1);
    EVP_MD_CTX_free(context);
    for (int i = 0; i < readers; i++)
        sendto(udp, datagram, length + signature_bytes, 0, (struct sockaddr *)&to[i], sizeof to[i]);
}

static void print_line(unsigned char *line, size_t length) {
    char text[most_bytes + 32];
    int written = snprintf(text, sizeof text, "%.*s %lld\n", (int)length, (char *)line, wall_microseconds());
    if (write(STDOUT_FILENO, text, (size_t)written) < 0) exit(1);
}

static void check(unsigned char *datagram, size_t count) {
    size_t length = count - signature_bytes;
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    int valid = EVP_DigestVerifyInit(context, NULL, NULL, NULL, key) == 1 &&
                EVP_DigestVerify(context, datagram + length, signature_bytes, datagram, length) == 1;
    EVP_MD_CTX_free(context);
    if (!valid) return;
    if (printing) hand(printing, datagram, length); else print_line(datagram, length);
}

static int write_lines(char **ports) {
    for (int i = 0; i < readers; i++) to[i] = loopback(atoi(ports[i]));
    char input[most_bytes];
    size_t held = 0;
    for (;;) {
        ssize_t count = read(STDIN_FILENO, input + held, sizeof input - held);
        if (count <= 0) return 0;
        held += (size_t)count;
        char *newline;
        while ((newline = memchr(input, '\n', held)) != NULL) {
            size_t length = (size_t)(newline - input);
            if (signing) hand(signing, (unsigned char *)input, length); else sign_and_send((unsigned char *)input, length);
            held -= length + 1;
            memmove(input, newline + 1, held);
        }
        if (held == sizeof input) held = 0;  /* a line longer than the buffer: dropped */
    }
}

static int read_lines(int port) {
    struct sockaddr_in here = loopback(port);
    if (bind(udp, (struct sockaddr *)&here, sizeof here) != 0) { perror("floor: bind"); return 1; }
    unsigned char datagram[most_bytes + signature_bytes];
    for (;;) {
        ssize_t count = recv(udp, datagram, sizeof datagram, 0);
        if (count < signature_bytes) continue;
        if (checking) hand(checking, datagram, (size_t)count); else check(datagram, (size_t)count);
    }
}

int main(int argc, char **argv) {
    unsigned char seed[32] = {0};
    key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof seed);
    udp = socket(AF_INET, SOCK_DGRAM, 0);
    if (key == NULL || udp < 0) return 1;
    const char *handovers = getenv("FLOOR_HANDOVERS");
    int handing = handovers != NULL && strcmp(handovers, "1") == 0;
    if (argc >= 3 && argc - 2 <= most_readers && strcmp(argv[1], "writer") == 0) {
        readers = argc - 2;
        if (handing) signing = start_handover(sign_and_send);
        return write_lines(argv + 2);
    }
    if (argc == 3 && strcmp(argv[1], "reader") == 0) {
        if (handing) {
            printing = start_handover(print_line);
            checking = start_handover(check);
        }
        return read_lines(atoi(argv[2]));
    }
    fprintf(stderr, "usage: floor writer PORT... | floor reader PORT\n");
    return 2;
}
