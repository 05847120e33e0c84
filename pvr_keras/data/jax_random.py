"""The JAX twin of ``random.py``: the same random bits and shuffles, in uint32 arithmetic.

JAX without ``jax_enable_x64`` has no 64-bit integers, and turning that on globally would
change every Keras model's dtypes, so a uint64 is a pair ``(hi, lo)`` of uint32 arrays here and
the splitmix64 finaliser runs on pairs: wrapping adds with a carry, shifts across the two
words, and products mod 2^64 from 32x32 -> 64-bit products built of 16-bit limbs. The epoch
order replicates TensorFlow's ``tf.random.experimental.index_shuffle`` (a 4-round Simon-like
Feistel cipher on the smallest even block of >= 16 bits that holds ``max_index``, walked until
it lands in [0, max_index]), so for the same (key, index, slot) or (key, epoch, position) this
module returns exactly what ``random.py`` returns; ``tests/data/test_device.py`` checks it bit
for bit. Example indices are uint32: a split holds fewer than 2^31 examples here.
"""

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from pvr_keras.data.keys import GOLDEN, MUL1, MUL2, mix_int

# tf.random.experimental.index_shuffle pads a [2] seed to [3] with this word in front.
_SHUFFLE_SEED_PAD = 498247692
_SIMON_C = 0xFFFFFFFC
_SIMON_Z = 0x7369F885192C0EF5
_MASK16 = 0xFFFF


def u32(value):
    """A Python int (taken mod 2^32) as a uint32 constant."""
    return np.uint32(int(value) & 0xFFFFFFFF)


def const64(value):
    """A Python int (mod 2^64) as a (hi, lo) pair of uint32 constants."""
    return u32(value >> 32), u32(value)


def mul32(a, b):
    """The full product of uint32 ``a`` and ``b`` (array or Python int): (hi, lo) words."""
    a0, a1 = a & _MASK16, a >> 16
    if isinstance(b, int) and b < 2**16:
        # One limb: (a1 b 2^16 + a0 b) >> 32 = (a1 b + (a0 b >> 16)) >> 16, all below 2^32.
        b = u32(b)
        return (a1 * b + ((a0 * b) >> 16)) >> 16, a * b
    if isinstance(b, int):
        b = u32(b)
    b0, b1 = b & _MASK16, b >> 16
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> 16) + (p01 & _MASK16) + (p10 & _MASK16)  # < 3 * 2^16
    return p11 + (p01 >> 16) + (p10 >> 16) + (middle >> 16), a * b


def add64(a, b):
    """a + b mod 2^64 on (hi, lo) pairs."""
    lo = a[1] + b[1]
    return a[0] + b[0] + (lo < a[1]).astype(jnp.uint32), lo


def xor64(a, b):
    return a[0] ^ b[0], a[1] ^ b[1]


def shr64(a, shift):
    """a >> shift for a static 0 < shift < 64."""
    hi, lo = a
    if shift >= 32:
        return jnp.zeros_like(hi), hi >> (shift - 32)
    return hi >> shift, (lo >> shift) | (hi << (32 - shift))


def mul64(a, constant):
    """a * constant mod 2^64 for a Python int constant."""
    c_hi, c_lo = int(constant >> 32) & 0xFFFFFFFF, int(constant) & 0xFFFFFFFF
    hi, lo = mul32(a[1], c_lo)
    return hi + a[0] * u32(c_lo) + a[1] * u32(c_hi), lo


def mix(z):
    """splitmix64 finaliser on (hi, lo) pairs (``random._mix``)."""
    z = add64(z, const64(GOLDEN))
    z = mul64(xor64(z, shr64(z, 30)), MUL1)
    z = mul64(xor64(z, shr64(z, 27)), MUL2)
    return xor64(z, shr64(z, 31))


def example_bits(key, index):
    """The per-example hash, mix(index + key): (B,) indices -> (hi, lo) (B,) uint32."""
    index = jnp.asarray(index).astype(jnp.uint32)
    return mix(add64((jnp.zeros_like(index), index), const64(key)))


def _slot_table(num_slots):
    """mix(slot) for slots 0..num_slots-1, folded in Python: (hi, lo) (num_slots,) uint32."""
    mixed = [mix_int(s) for s in range(num_slots)]
    return (
        np.array([z >> 32 for z in mixed], np.uint32),
        np.array([z & 0xFFFFFFFF for z in mixed], np.uint32),
    )


def slot_bits(example, slots):
    """64 random bits of (example, slot), ``random.random_bits``'s second hash.

    Args:
        example: ``example_bits`` of the batch, (hi, lo) of shape (B,).
        slots: a sequence of static slot numbers.

    Returns:
        (hi, lo) uint32 arrays of shape (B, len(slots)).
    """
    table = _slot_table(max(slots) + 1)
    hi, lo = table[0][list(slots)], table[1][list(slots)]  # (S,) constants
    return mix((example[0][:, None] ^ hi, example[1][:, None] ^ lo))


def random_bits(key, index, num_slots):
    """64 random bits per (example, slot), as ``random.random_bits``.

    Args:
        key: the stream's 64-bit key (a Python int).
        index: (B,) example indices, any integer dtype with values in [0, 2^32).
        num_slots: hash slots per example.

    Returns:
        (hi, lo): two uint32 arrays of shape (B, num_slots).
    """
    return slot_bits(example_bits(key, index), range(num_slots))


def uniform_int(bits, maxval):
    """Integers uniform in [0, maxval) for maxval < 2^31, as ``random.uniform_int``: the top
    32 bits times maxval, shifted down (multiply-shift).

    Args:
        bits: a (hi, lo) pair, or just its ``hi`` words.
        maxval: a Python int, a NumPy array (static, broadcast against the bits: one bound
            per column), or a traced array of the bits' shape.

    Returns:
        int32 of the bits' shape.
    """
    hi = bits[0] if isinstance(bits, tuple) else bits
    if isinstance(maxval, int | np.integer | np.ndarray):
        maxval = np.asarray(maxval)
        if maxval.size and not (0 < maxval.min() and maxval.max() < 2**31):
            raise ValueError(f"maxval must be in 1..2^31-1 here; received {maxval}")
        if maxval.max() < 2**16:
            # One limb: (a1 b 2^16 + a0 b) >> 32 = (a1 b + (a0 b >> 16)) >> 16, all < 2^32.
            b = maxval.astype(np.uint32)
            high = ((hi >> 16) * b + (((hi & _MASK16) * b) >> 16)) >> 16
            return high.astype(jnp.int32)
        maxval = int(maxval) if maxval.ndim == 0 else jnp.asarray(maxval.astype(np.uint32))
    else:
        maxval = jnp.asarray(maxval).astype(jnp.uint32)
    return mul32(hi, maxval)[0].astype(jnp.int32)


def uniform_wide(bits, maxval):
    """Integers uniform in [0, maxval) for any maxval <= 2^53, as ``random.uniform_int``.

    Below 2^31 this is ``uniform_int``. Above, TensorFlow goes through a float64 in [0, 1):
    ``min(floor(float64(m * 2^-53) * maxval), maxval - 1)`` with m the top 53 bits. Without
    float64 the rounded product is rebuilt from the exact one, P = m * maxval (< 2^105):
    q = P >> 53 is the answer unless the round-to-nearest-even of P to 53 significant bits
    (a multiple of 2^e, e = bit length of q) carries it up to the next multiple of 2^53, which
    happens exactly when q > 0 and P mod 2^53 >= 2^53 - 2^(e-1), a tie going to the even
    multiple: the upper one for e < 53, the upper one when q is odd for e = 53.

    Returns:
        (hi, lo) uint32 words of the result.
    """
    maxval = int(maxval)
    if maxval < 2**31:
        value = uniform_int(bits, maxval).astype(jnp.uint32)
        return jnp.zeros_like(value), value
    if maxval > 2**53:
        raise ValueError(f"maxval must be at most 2^53 here; received {maxval}")
    hi, lo = bits
    # m = bits >> 11 as four 16-bit limbs (53 bits); maxval as four Python limbs.
    m_lo, m_hi = (hi << 21) | (lo >> 11), hi >> 11
    product = _limb_product(
        [m_lo & _MASK16, m_lo >> 16, m_hi & _MASK16, m_hi >> 16],
        [(maxval >> (16 * i)) & _MASK16 for i in range(4)],
    )  # 8 limbs of 16 bits, least significant first
    q_lo, q_hi = _limb_bits(product, 53, 32), _limb_bits(product, 85, 21)
    r_lo, r_hi = _limb_bits(product, 0, 32), _limb_bits(product, 32, 21)
    bit_length = jnp.where(q_hi > 0, 64 - lax.clz(q_hi), 32 - lax.clz(q_lo))  # e, 0 when q == 0
    half = jnp.maximum(bit_length, 1).astype(jnp.uint32) - 1  # e - 1
    # threshold 2^53 - 2^(e-1) as (21-bit hi, lo) words; e <= 53.
    t_hi = jnp.where(half >= 32, (1 << 21) - (u32(1) << (half - 32)), (1 << 21) - 1)
    t_lo = jnp.where(half >= 32, u32(0), u32(0) - (u32(1) << (half & 31)))
    above = (r_hi > t_hi) | ((r_hi == t_hi) & (r_lo > t_lo))
    tie = (r_hi == t_hi) & (r_lo == t_lo)
    even_above = (bit_length < 53) | ((q_lo & 1) == 1)  # the upper multiple is the even one
    up = ((bit_length > 0) & (above | (tie & even_above))).astype(jnp.uint32)
    value = add64((q_hi, q_lo), (jnp.zeros_like(up), up))
    top = const64(maxval - 1)
    over = (value[0] > top[0]) | ((value[0] == top[0]) & (value[1] > top[1]))
    return jnp.where(over, top[0], value[0]), jnp.where(over, top[1], value[1])


def _limb_product(a, b):
    """Product of 16-bit limb lists (``a`` arrays, ``b`` Python ints), as 16-bit limbs."""
    columns = [0] * (len(a) + len(b))
    for i, a_i in enumerate(a):
        for j, b_j in enumerate(b):
            if b_j:
                p = a_i * u32(b_j)
                columns[i + j] = columns[i + j] + (p & _MASK16)
                columns[i + j + 1] = columns[i + j + 1] + (p >> 16)
    limbs, carry = [], 0
    for column in columns:
        total = column + carry
        limbs.append(jnp.asarray(total, jnp.uint32) & _MASK16)
        carry = total >> 16
    return limbs


def _limb_bits(limbs, start, count):
    """Bits [start, start + count) (count <= 32) of a 16-bit limb list, as uint32."""
    out = jnp.zeros_like(limbs[0])
    for i, limb in enumerate(limbs):
        low, high = 16 * i, 16 * i + 16
        if high <= start or low >= start + count:
            continue
        out = out | (limb >> (start - low) if low < start else limb << (low - start))
    return out & u32((1 << count) - 1) if count < 32 else out


# ------------------------------------------------------------------ the epoch order ----


def _block_bits(max_index):
    """TensorFlow's block size for ``index_shuffle``: ceil(log2(max_index)), made even, >= 16."""
    size = math.ceil(math.log2(max_index))
    return max(size + size % 2, 16)


def _rotate_left(x, shift, width, mask):
    return ((x << shift) | (x >> (width - shift))) & mask


def index_shuffle(index, key, epoch, max_index):
    """``tf.random.experimental.index_shuffle(index, [key & (2^63-1), epoch], max_index)``.

    A bijection of [0, max_index] computed per index (no permutation held in memory).

    Args:
        index: (B,) uint32 positions in [0, max_index].
        key: the stream's 64-bit key (a Python int; only its low 32 bits reach the cipher).
        epoch: the epoch number, a uint32 scalar (traced or not).
        max_index: a Python int < 2^32.

    Returns:
        (B,) uint32 shuffled positions.
    """
    index = jnp.asarray(index).astype(jnp.uint32)
    if max_index == 0:
        return jnp.zeros_like(index)
    width = _block_bits(max_index) // 2
    if width > 16:
        raise ValueError(f"max_index must be below 2^32 here; received {max_index}")
    mask = u32((1 << width) - 1)
    words = [u32(_SHUFFLE_SEED_PAD), u32(key), jnp.asarray(epoch).astype(jnp.uint32)]
    round_keys = [w & mask for w in words]  # the key words truncated to the word size
    # Four rounds need one key beyond the three words: c ^ (z & 1) ^ k0 ^ ror(k2, 3) ^ ror(k2, 4).
    round_keys.append(
        (u32(_SIMON_C) & mask)
        ^ u32(_SIMON_Z & 1)
        ^ round_keys[0]
        ^ _rotate_left(round_keys[2], width - 3, width, mask)
        ^ _rotate_left(round_keys[2], width - 4, width, mask)
    )

    def feistel(x):
        return (_rotate_left(x, 1, width, mask) & _rotate_left(x, 8, width, mask)) ^ (
            _rotate_left(x, 2, width, mask)
        )

    def encrypt(value):
        # Words wider than the block are cut to it, as TensorFlow's bitsets do.
        left, right = (value >> width) & mask, value & mask
        for k in range(0, len(round_keys), 2):
            left = left ^ feistel(right) ^ round_keys[k]
            right = right ^ feistel(left) ^ round_keys[k + 1]
        return (left << width) | right

    limit = u32(max_index)
    # Cycle walking: re-encrypt the values that fell outside [0, max_index].
    return lax.while_loop(
        lambda v: jnp.any(v > limit),
        lambda v: jnp.where(v > limit, encrypt(v), v),
        encrypt(index),
    )


def epoch_order(num_examples, batch_start, batch_size, key, epoch, shuffle):
    """Example indices of one batch of one epoch, as ``random.epoch_order``: (batch_size,)
    uint32 for a static ``batch_size`` (the caller keeps ``batch_start + batch_size <=
    num_examples``); ``batch_start`` and ``epoch`` may be traced."""
    positions = jnp.asarray(batch_start).astype(jnp.uint32) + jnp.arange(
        batch_size, dtype=jnp.uint32
    )
    if not shuffle:
        return positions
    return index_shuffle(positions, key, epoch, num_examples - 1)
