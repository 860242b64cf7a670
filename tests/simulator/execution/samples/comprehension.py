# call: f('abc')
def f(s):
    codes = [ord(c) for c in s]
    pairs = dict(zip(s, codes))
    print(pairs)
    return sorted(pairs.items(), key=lambda kv: -kv[1])
