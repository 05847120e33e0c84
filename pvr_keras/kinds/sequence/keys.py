"""What the image-sequence generators share, in plain Python: their two stream keys.

Example i of a split has the tokens and label of example i of the token stream of the same
(task, seed, split, holdout) (``pvr_keras.kinds.token.keys``); a second stream, keyed with
``IMAGE_SALT``, draws each token's image: slot p (0..seq_len-1) picks the image of position
p's digit, uniform among the split's MNIST images of that digit. The token stream's key also
keys the epoch orders, so the sequences come in ``token_dataset``'s order.
"""

from pvr_keras.kinds.token import keys as token_keys

IMAGE_SALT = 1  # the image stream's salt (a held-out tuple's part of a token key is >= 2)
NUM_DIGITS = 10  # tokens are drawn as MNIST digits


def stream_keys(task, seed, split, holdout):
    """(the token stream's key, the image stream's key) of a split."""
    return (
        token_keys.stream_key(task, seed, split, holdout),
        token_keys.stream_key(task, seed, split, holdout, IMAGE_SALT),
    )
