"""The small tokenizer the appliers use for expressions, headers and includes."""

from __future__ import annotations

from regrapht.cuda.tokens import closing, find_word, includes, is_name, tokens, top_level_commas, word_id


def test_tokens_keep_numbers_whole_and_longest_punctuators() -> None:
    assert [t.text for t in tokens("(n + 255) / 256 1.5e-3f 0x1Fu a->b x<<=2 .5")] == [
        "(", "n", "+", "255", ")", "/", "256", "1.5e-3f", "0x1Fu", "a", "->", "b", "x", "<<=", "2", ".5"]
    found = tokens("f(a, g(b, c), d)")
    assert closing(found, 1) == len(found) - 1
    assert [found[i].text for i in top_level_commas(found, 2, len(found) - 1)] == [",", ","]


def test_words_names_and_includes() -> None:
    assert find_word("x __global__ y", "__global__") == 2 and find_word("my__global__", "__global__") == -1
    assert is_name("_a1") and not is_name("1a") and not is_name("a-b")
    assert word_id("unsigned int") == "unsigned_int" and word_id("a::b<c>") == "a_b_c_"
    assert includes("  #  include <cub/cub.cuh>\nint x;", "cub/cub.cuh")
    assert not includes("// <cub/cub.cuh>\n", "cub/cub.cuh")
