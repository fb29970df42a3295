//! "Did you mean": how far apart two names are, for the messages that offer the nearest known
//! name (a zone, a file beside the one that does not exist) instead of only refusing.

/// Levenshtein distance over characters: the fewest insertions, deletions and substitutions that
/// turn `a` into `b`. Quadratic: callers bound the lengths they compare.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = Vec::with_capacity(b.len() + 1);
        current.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_edits_by_character() {
        assert_eq!(edit_distance("asia/seol", "asia/seoul"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("séoul", "seoul"), 1, "a character, not a byte");
    }
}
