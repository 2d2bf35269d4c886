// printf-style formatting (see format.h). Pure: no globals, no libc.
#include "guest-stub/runtime/format.h"

#include "guest-stub/runtime/muldiv.h"

#include <stdint.h>

namespace guest {
namespace {

struct Spec {
    bool left = false, zero = false, plus = false, space = false, alt = false;
    int width = 0;
    int prec = -1; // -1: not given
};

class Out {
public:
    explicit Out(FormatSink sink) : sink_(sink) {}
    void put(const char* s, size_t n)
    {
        if (n != 0) {
            sink_.write(sink_.ctx, s, n);
            count_ += n;
        }
    }
    void repeat(char c, size_t n)
    {
        char chunk[32];
        for (size_t i = 0; i < sizeof chunk; ++i)
            chunk[i] = c;
        while (n > 0) {
            size_t k = n < sizeof chunk ? n : sizeof chunk;
            put(chunk, k);
            n -= k;
        }
    }
    size_t count() const { return count_; }

private:
    FormatSink sink_;
    size_t count_ = 0;
};

size_t str_len(const char* s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n] != '\0')
        ++n;
    return n;
}

// Lays out prefix (sign, 0x), zero_fill zeros, then body, padded to width.
void emit_padded(Out& out, const Spec& spec, const char* prefix, size_t nprefix, size_t zero_fill,
                 const char* body, size_t nbody, bool zero_pad_allowed)
{
    size_t total = nprefix + zero_fill + nbody;
    size_t pad = spec.width > 0 && (size_t)spec.width > total ? (size_t)spec.width - total : 0;
    if (spec.left) {
        out.put(prefix, nprefix);
        out.repeat('0', zero_fill);
        out.put(body, nbody);
        out.repeat(' ', pad);
    } else if (spec.zero && zero_pad_allowed) {
        out.put(prefix, nprefix);
        out.repeat('0', zero_fill + pad);
        out.put(body, nbody);
    } else {
        out.repeat(' ', pad);
        out.put(prefix, nprefix);
        out.repeat('0', zero_fill);
        out.put(body, nbody);
    }
}

// Appends the sign character spec asks for (if any) to prefix.
void add_sign(const Spec& spec, bool negative, char* prefix, size_t* nprefix)
{
    if (negative)
        prefix[(*nprefix)++] = '-';
    else if (spec.plus)
        prefix[(*nprefix)++] = '+';
    else if (spec.space)
        prefix[(*nprefix)++] = ' ';
}

// Digits of v in base, most significant first, into buf (>= 24 bytes).
size_t u64_digits(char* buf, uint64_t v, unsigned base, bool upper)
{
    const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v != 0);
    for (size_t i = 0; i < n; ++i)
        buf[i] = tmp[n - 1 - i];
    return n;
}

void emit_integer(Out& out, const Spec& spec, uint64_t magnitude, bool negative, unsigned base,
                  bool upper, bool is_signed, bool force_hex_prefix)
{
    char body[24];
    size_t nbody = u64_digits(body, magnitude, base, upper);
    if (spec.prec == 0 && magnitude == 0)
        nbody = 0; // C: zero with precision 0 prints no digits
    char prefix[3];
    size_t nprefix = 0;
    if (is_signed)
        add_sign(spec, negative, prefix, &nprefix);
    if ((spec.alt && base == 16 && magnitude != 0) || force_hex_prefix) {
        prefix[nprefix++] = '0';
        prefix[nprefix++] = upper ? 'X' : 'x';
    }
    size_t zero_fill = 0;
    if (spec.prec > 0 && (size_t)spec.prec > nbody)
        zero_fill = (size_t)spec.prec - nbody;
    if (spec.alt && base == 8 && zero_fill == 0 && (nbody == 0 || body[0] != '0'))
        zero_fill = 1;
    emit_padded(out, spec, prefix, nprefix, zero_fill, body, nbody, spec.prec < 0);
}


// Floating point (%f %e %g, upper-case too): correct to the last digit
// shown for magnitudes a program prints, not bit-exact like glibc at every
// tie. %f of |v| >= 1e18 falls back to %e (the integer part must fit a u64).
constexpr int kMaxFloatPrecision = 17;

// x >= 0 to the nearest integer, ties to even (what glibc does for an
// exactly representable tie such as 0.25 at one decimal).
uint64_t round_half_even(double x)
{
    uint64_t i = (uint64_t)x;
    const double rem = x - (double)i;
    if (rem > 0.5 || (rem == 0.5 && (i & 1)))
        ++i;
    return i;
}

uint64_t pow10_u64(int n)
{
    uint64_t r = 1;
    while (n-- > 0)
        r *= 10;
    return r;
}

// v >= 0, finite: digits of v rounded to prec decimals, as "int.frac".
size_t fixed_digits(char* buf, double v, int prec, bool alt)
{
    const uint64_t scale = pow10_u64(prec);
    uint64_t ip = (uint64_t)v;
    uint64_t fp = round_half_even((v - (double)ip) * (double)scale);
    if (fp >= scale) {
        fp -= scale;
        ++ip;
    }
    size_t n = u64_digits(buf, ip, 10, false);
    if (prec > 0 || alt)
        buf[n++] = '.';
    char frac[24];
    size_t nf = u64_digits(frac, fp, 10, false);
    for (size_t i = nf; i < (size_t)prec; ++i)
        buf[n++] = '0';
    for (size_t i = 0; i < nf && prec > 0; ++i)
        buf[n++] = frac[i];
    return n;
}

// v >= 0, finite: v = m * 10^exp with m rounded to prec decimals, 1 <= m < 10.
uint64_t scientific_mantissa(double v, int prec, int* exp)
{
    *exp = 0;
    if (v == 0)
        return 0;
    while (v >= 10) {
        v /= 10;
        ++*exp;
    }
    while (v < 1) {
        v *= 10;
        --*exp;
    }
    uint64_t m = round_half_even(v * (double)pow10_u64(prec));
    if (m >= pow10_u64(prec + 1)) {
        m /= 10;
        ++*exp;
    }
    return m;
}

size_t scientific_digits(char* buf, double v, int prec, bool alt, bool upper)
{
    int exp;
    const uint64_t m = scientific_mantissa(v, prec, &exp);
    char digits[24];
    size_t nd = u64_digits(digits, m, 10, false);
    size_t n = 0;
    buf[n++] = digits[0];
    if (prec > 0 || alt)
        buf[n++] = '.';
    for (size_t i = 1; i < nd; ++i)
        buf[n++] = digits[i];
    for (size_t i = nd; i < (size_t)prec + 1; ++i)
        buf[n++] = '0';
    buf[n++] = upper ? 'E' : 'e';
    buf[n++] = exp < 0 ? '-' : '+';
    const unsigned e = (unsigned)(exp < 0 ? -exp : exp);
    if (e < 10)
        buf[n++] = '0';
    n += u64_digits(buf + n, e, 10, false);
    return n;
}

void emit_float(Out& out, const Spec& spec, double v, char conv)
{
    const bool upper = conv == 'F' || conv == 'E' || conv == 'G';
    const bool negative = __builtin_signbit(v);
    if (negative)
        v = -v;
    char prefix[2];
    size_t nprefix = 0;
    add_sign(spec, negative, prefix, &nprefix);
    char body[64];
    size_t n;
    if (v != v || v == __builtin_inf()) {
        const char* word = v != v ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
        emit_padded(out, spec, prefix, nprefix, 0, word, 3, false);
        return;
    }
    int prec = spec.prec < 0 ? 6 : spec.prec;
    if (prec > kMaxFloatPrecision)
        prec = kMaxFloatPrecision;
    const char kind = (char)(conv | 0x20);
    if (kind == 'g') {
        const int p = prec == 0 ? 1 : prec;
        int exp;
        scientific_mantissa(v, p - 1, &exp);
        if (exp >= -4 && exp < p && v < 1e18)
            n = fixed_digits(body, v, p - 1 - exp, spec.alt);
        else
            n = scientific_digits(body, v, p - 1, spec.alt, upper);
        if (!spec.alt) { // %g drops trailing zeros of the fraction
            size_t point = 0;
            while (point < n && body[point] != '.')
                ++point;
            size_t end = point;
            while (end < n && body[end] != 'e' && body[end] != 'E')
                ++end;
            if (point < end) {
                size_t last = end;
                while (last > point + 1 && body[last - 1] == '0')
                    --last;
                if (last == point + 1)
                    last = point;
                for (size_t i = end; i < n; ++i)
                    body[last + (i - end)] = body[i];
                n = last + (n - end);
            }
        }
    } else if (kind == 'f' && v < 1e18) {
        n = fixed_digits(body, v, prec, spec.alt);
    } else {
        n = scientific_digits(body, v, prec, spec.alt, upper);
    }
    emit_padded(out, spec, prefix, nprefix, 0, body, n, true);
}

} // namespace

size_t vformat(FormatSink sink, const char* fmt, va_list ap)
{
    Out out(sink);
    const char* p = fmt;
    while (*p != '\0') {
        const char* run = p;
        while (*p != '\0' && *p != '%')
            ++p;
        out.put(run, (size_t)(p - run));
        if (*p == '\0')
            break;
        const char* conv_start = p++;
        Spec spec;
        for (;; ++p) {
            if (*p == '-')
                spec.left = true;
            else if (*p == '0')
                spec.zero = true;
            else if (*p == '+')
                spec.plus = true;
            else if (*p == ' ')
                spec.space = true;
            else if (*p == '#')
                spec.alt = true;
            else
                break;
        }
        if (*p == '*') {
            int w = va_arg(ap, int);
            if (w < 0) {
                spec.left = true;
                w = -w;
            }
            spec.width = w;
            ++p;
        } else {
            while (*p >= '0' && *p <= '9')
                spec.width = spec.width * 10 + (*p++ - '0');
        }
        if (*p == '.') {
            ++p;
            spec.prec = 0;
            if (*p == '*') {
                int pr = va_arg(ap, int);
                spec.prec = pr < 0 ? -1 : pr;
                ++p;
            } else {
                while (*p >= '0' && *p <= '9')
                    spec.prec = spec.prec * 10 + (*p++ - '0');
            }
        }
        int size = 0; // -2 hh, -1 h, 0 int, 1 long/long long/size_t
        for (;; ++p) {
            if (*p == 'h')
                size = size == -1 ? -2 : -1;
            else if (*p == 'l' || *p == 'z' || *p == 'j' || *p == 't')
                size = 1;
            else
                break;
        }
        char conv = *p;
        if (conv == '\0') {
            out.put(conv_start, (size_t)(p - conv_start));
            break;
        }
        ++p;
        switch (conv) {
        case 'd':
        case 'i': {
            int64_t v = size == 1 ? va_arg(ap, long) : va_arg(ap, int);
            if (size == -1)
                v = (short)v;
            else if (size == -2)
                v = (signed char)v;
            uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
            emit_integer(out, spec, mag, v < 0, 10, false, true, false);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
        case 'o': {
            uint64_t v = size == 1 ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
            if (size == -1)
                v = (unsigned short)v;
            else if (size == -2)
                v = (unsigned char)v;
            unsigned base = conv == 'u' ? 10 : conv == 'o' ? 8 : 16;
            emit_integer(out, spec, v, false, base, conv == 'X', false, false);
            break;
        }
        case 'p': {
            uint64_t v = (uint64_t)(uintptr_t)va_arg(ap, void*);
            emit_integer(out, spec, v, false, 16, false, false, true);
            break;
        }
        case 'c': {
            char c = (char)va_arg(ap, int);
            Spec s = spec;
            s.zero = false;
            emit_padded(out, s, nullptr, 0, 0, &c, 1, false);
            break;
        }
        case 's': {
            const char* s = va_arg(ap, const char*);
            if (s == nullptr)
                s = "(null)";
            size_t n = str_len(s, spec.prec < 0 ? (size_t)-1 : (size_t)spec.prec);
            emit_padded(out, spec, nullptr, 0, 0, s, n, false);
            break;
        }
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G':
            emit_float(out, spec, va_arg(ap, double), conv);
            break;
        case '%':
            out.put("%", 1);
            break;
        default: // unknown (a, L, n): print the directive as written
            out.put(conv_start, (size_t)(p - conv_start));
            break;
        }
    }
    return out.count();
}

size_t format(FormatSink sink, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = vformat(sink, fmt, ap);
    va_end(ap);
    return n;
}

namespace {
struct BufferSink {
    char* buf;
    size_t size; // capacity including the NUL
    size_t used;
};

void buffer_write(void* ctx, const char* data, size_t len)
{
    auto* b = static_cast<BufferSink*>(ctx);
    for (size_t i = 0; i < len && b->used + 1 < b->size; ++i)
        b->buf[b->used++] = data[i];
}
} // namespace

size_t vsnformat(char* buf, size_t size, const char* fmt, va_list ap)
{
    BufferSink b{buf, size, 0};
    size_t n = vformat(FormatSink{buffer_write, &b}, fmt, ap);
    if (size > 0)
        buf[b.used] = '\0';
    return n;
}

size_t snformat(char* buf, size_t size, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = vsnformat(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

DecimalText decimal_ratio(uint64_t num, uint64_t den, unsigned digits)
{
    DecimalText d{};
    if (den == 0) {
        d.text[0] = '-';
        return d;
    }
    if (digits > kMaxDecimalDigits)
        digits = kMaxDecimalDigits;
    uint64_t scale = 1;
    for (unsigned i = 0; i < digits; ++i)
        scale *= 10;
    uint64_t whole = num / den;
    // rem < den, so rem * scale / den < scale fits 64 bits.
    uint64_t left = 0;
    uint64_t frac = mul_div_u64(num % den, scale, den, &left);
    if (left >= den - left) { // remainder >= den / 2: round half up
        if (++frac == scale) {
            frac = 0;
            ++whole; // cannot wrap: whole = 2^64-1 needs den = 1, which leaves no remainder
        }
    }
    size_t n = u64_digits(d.text, whole, 10, false);
    if (digits > 0) {
        d.text[n++] = '.';
        char tmp[24];
        const size_t nf = u64_digits(tmp, frac, 10, false);
        for (size_t i = nf; i < digits; ++i)
            d.text[n++] = '0';
        for (size_t i = 0; i < nf; ++i)
            d.text[n++] = tmp[i];
    }
    d.text[n] = '\0';
    return d;
}

} // namespace guest
