// Placeholder until the CLI lands (same commit series).
int main() { return 0; }
