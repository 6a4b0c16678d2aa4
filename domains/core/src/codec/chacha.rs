//! The ChaCha8 block function: the fault draws compute the one block that
//! holds a draw instead of running a whole generator to it (tested word for
//! word against `rand_chacha`'s `ChaCha8Rng`).

/// One ChaCha block with 8 rounds (4 double rounds): the 32-byte key, a
/// 64-bit block counter and a 64-bit stream, laid out as `ChaCha8Rng` lays
/// them out.
pub(crate) fn chacha8_block(key: &[u8; 32], counter: u64, stream: u64) -> [u32; 16] {
    fn quarter(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(16);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(12);
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(8);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(7);
    }
    let mut input = [0u32; 16];
    input[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    for (word, bytes) in input[4..12].iter_mut().zip(key.chunks_exact(4)) {
        *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    input[12..].copy_from_slice(&[counter as u32, (counter >> 32) as u32, stream as u32, (stream >> 32) as u32]);
    let mut x = input;
    for _ in 0..4 {
        quarter(&mut x, 0, 4, 8, 12);
        quarter(&mut x, 1, 5, 9, 13);
        quarter(&mut x, 2, 6, 10, 14);
        quarter(&mut x, 3, 7, 11, 15);
        quarter(&mut x, 0, 5, 10, 15);
        quarter(&mut x, 1, 6, 11, 12);
        quarter(&mut x, 2, 7, 8, 13);
        quarter(&mut x, 3, 4, 9, 14);
    }
    for (out, add) in x.iter_mut().zip(input) {
        *out = out.wrapping_add(add);
    }
    x
}

#[cfg(test)]
mod tests {
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::{Rng, SeedableRng};

    use super::chacha8_block;

    #[test]
    fn a_block_is_the_generators_sixteen_words_at_its_position() {
        for (seed, counter, stream) in [(0u8, 0u64, 0u64), (7, 1, 3), (255, 123_456, u64::MAX), (42, u64::from(u32::MAX) + 5, 2)] {
            let key = [seed; 32];
            let mut rng = ChaCha8Rng::from_seed(key);
            rng.set_stream(stream);
            rng.set_word_pos(u128::from(counter) * 16);
            let words: Vec<u32> = (0..16).map(|_| rng.next_u32()).collect();
            assert_eq!(chacha8_block(&key, counter, stream).to_vec(), words, "counter {counter} stream {stream}");
        }
    }
}
