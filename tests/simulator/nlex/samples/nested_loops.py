# call: f(['ab', 'cde', 'f'])
def f(words):
    out = ''
    for w in words:
        for ch in w:
            out = ch + out
    return out
