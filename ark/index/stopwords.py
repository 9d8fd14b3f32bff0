"""English stopword list used by the default :class:`~ark.index.Tokenizer`.

Function words that carry no topical signal for node retrieval: articles, pronouns, auxiliaries,
prepositions, conjunctions and a few very common adverbs. All entries are lowercase and at least two
characters long (one-character tokens are never produced by the tokenizer).
"""

from __future__ import annotations

ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    [
        "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as",
        "at", "be", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
        "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have",
        "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "if", "in", "into",
        "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now",
        "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
        "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
        "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
        "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
        "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"
    ]
)
