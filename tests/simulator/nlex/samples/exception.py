# call: f({'a': 1}, 'b')
def get(d, key):
    return d[key]


def f(d, key):
    try:
        value = get(d, key)
    except KeyError as exc:
        value = 'missing ' + str(exc)
    return value
