/* Small OS helpers: the monotonic clock and random hex tokens (sysutil.h). */
#include "config.h"

#include <sys/random.h>
#include <time.h>

#include "sysutil.h"

int64_t te_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int te_random_hex(char *buf, size_t size, size_t ndigits)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[64];
	size_t i;

	if (!buf || !size)
		return -1;
	buf[0] = '\0';
	if (!ndigits || ndigits % 2 || ndigits / 2 > sizeof(rnd) ||
	    size <= ndigits ||
	    getrandom(rnd, ndigits / 2, 0) != (ssize_t)(ndigits / 2))
		return -1;
	for (i = 0; i < ndigits / 2; i++) {
		buf[2 * i] = hex[rnd[i] >> 4];
		buf[2 * i + 1] = hex[rnd[i] & 0xf];
	}
	buf[ndigits] = '\0';
	return 0;
}
