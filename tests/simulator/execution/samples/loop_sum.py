# call: f([3, 1, 2])
def f(nums):
    total = 0
    for n in nums:
        if n > 1:
            total += n
    return total
