"""The grammar's terminals as regex text. Generated from grammar/pbtxt.lark: do not edit.

The scanner builds its lexer and layout regexes from these without building the Lark parser.
Regenerate with ``python tools/gen_terminals.py --write`` after changing a terminal in the
grammar; tests/test_terminals.py fails while this file and the grammar differ.
"""

TERMINALS = {
    'NEG': '\\-',
    'IDENT': '[A-Za-z_][A-Za-z0-9_]*',
    'NUMBER': '(?:(?:(?:0|[1-9][0-9]*)\\.[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fF]?|(?:0|[1-9][0-9]*)[eE][+-]?[0-9]+[fF]?|(?:0|[1-9][0-9]*)[fF]|0[xX][0-9A-Fa-f]+|0[0-7]+|0|[1-9][0-9]*)(?![A-Za-z0-9_])',
    'STRING': '(?:"[^"\\\\\n\x00]*(?:\\\\(?:[abfnrtv?\\\\\'"]|[0-7]{3}|[0-7]{1,2}(?![0-7])|x(?:[0-9A-Fa-f]{2}|[0-9A-Fa-f](?![0-9A-Fa-f]))|u(?![dD][89a-fA-F])[0-9A-Fa-f]{4}|U000(?!0[dD][89a-fA-F])[0-9A-Fa-f]{5}|U0010[0-9A-Fa-f]{4})[^"\\\\\n\x00]*)*"|\'[^\'\\\\\n\x00]*(?:\\\\(?:[abfnrtv?\\\\\'"]|[0-7]{3}|[0-7]{1,2}(?![0-7])|x(?:[0-9A-Fa-f]{2}|[0-9A-Fa-f](?![0-9A-Fa-f]))|u(?![dD][89a-fA-F])[0-9A-Fa-f]{4}|U000(?!0[dD][89a-fA-F])[0-9A-Fa-f]{5}|U0010[0-9A-Fa-f]{4})[^\'\\\\\n\x00]*)*\')',
    'COMMENT': '#[^\n]*',
    'WS': '[ \t\n\r\\v\x0c]+',
    'COLON': ':',
    'SEMICOLON': ';',
    'COMMA': ',',
    'LSQB': '\\[',
    'RSQB': '\\]',
    'SLASH': '/',
    'DOT': '\\.',
    'LBRACE': '\\{',
    'RBRACE': '\\}',
    'LESSTHAN': '<',
    'MORETHAN': '>',
}
