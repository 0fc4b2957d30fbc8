def main() -> int:
    print("esatui 0.1.0")
    return 0
