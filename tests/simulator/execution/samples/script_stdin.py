# stdin: '3\n1 2 3\n'
n = int(input())
xs = list(map(int, input().split()))
best = max(xs)
print(best * n)
