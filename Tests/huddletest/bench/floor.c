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
 * between processes, one signature made and one checked per reader. Built by floor.py; never
 * linked into Huddle. */
#include <openssl/evp.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

enum { signature_bytes = 64, most_readers = 16, most_bytes = 4096 };

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

static int write_lines(EVP_PKEY *key, int udp, int readers, char **ports) {
    struct sockaddr_in to[most_readers];
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
            unsigned char datagram[most_bytes + signature_bytes];
            size_t signed_bytes = signature_bytes;
            memcpy(datagram, input, length);
            EVP_MD_CTX *context = EVP_MD_CTX_new();
            if (EVP_DigestSignInit(context, NULL, NULL, NULL, key) != 1 ||
                EVP_DigestSign(context, datagram + length, &signed_bytes, datagram, length) != 1) return 1;
            EVP_MD_CTX_free(context);
            for (int i = 0; i < readers; i++)
                sendto(udp, datagram, length + signature_bytes, 0, (struct sockaddr *)&to[i], sizeof to[i]);
            held -= length + 1;
            memmove(input, newline + 1, held);
        }
        if (held == sizeof input) held = 0;  /* a line longer than the buffer: dropped */
    }
}

static int read_lines(EVP_PKEY *key, int udp, int port) {
    struct sockaddr_in here = loopback(port);
    if (bind(udp, (struct sockaddr *)&here, sizeof here) != 0) { perror("floor: bind"); return 1; }
    unsigned char datagram[most_bytes + signature_bytes];
    for (;;) {
        ssize_t count = recv(udp, datagram, sizeof datagram, 0);
        if (count < signature_bytes) continue;
        size_t length = (size_t)count - signature_bytes;
        EVP_MD_CTX *context = EVP_MD_CTX_new();
        int valid = EVP_DigestVerifyInit(context, NULL, NULL, NULL, key) == 1 &&
                    EVP_DigestVerify(context, datagram + length, signature_bytes, datagram, length) == 1;
        EVP_MD_CTX_free(context);
        if (!valid) continue;
        char line[most_bytes + 32];
        int written = snprintf(line, sizeof line, "%.*s %lld\n", (int)length, (char *)datagram, wall_microseconds());
        if (write(STDOUT_FILENO, line, (size_t)written) < 0) return 1;
    }
}

int main(int argc, char **argv) {
    unsigned char seed[32] = {0};
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof seed);
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    if (key == NULL || udp < 0) return 1;
    if (argc >= 3 && argc - 2 <= most_readers && strcmp(argv[1], "writer") == 0) return write_lines(key, udp, argc - 2, argv + 2);
    if (argc == 3 && strcmp(argv[1], "reader") == 0) return read_lines(key, udp, atoi(argv[2]));
    fprintf(stderr, "usage: floor writer PORT... | floor reader PORT\n");
    return 2;
}
