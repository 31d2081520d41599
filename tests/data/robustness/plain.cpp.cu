// Plain C++: no CUDA at all.
#include <vector>
#include <string>
template <typename T> struct Box { T value; auto get() const -> T { return value; } };
namespace ns { class Widget { public: virtual ~Widget() = default; int operator()(int x) { return x * 2; } }; }
int main() { std::vector<Box<std::string>> v{{"a"}}; auto f = [&](auto &b) { return b.get().size(); }; return (int)f(v[0]); }
