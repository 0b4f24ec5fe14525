#include "testca.h"

namespace airlock::test {

std::unique_ptr<TestCa> TestCa::generate(const QString &label)
{
    auto ca = airlock::pki::SandboxCa::generate(label);
    if (!ca) {
        qWarning("test CA: %s", qPrintable(ca.error().message));
        return nullptr;
    }
    return std::unique_ptr<TestCa>(new TestCa(std::move(*ca)));
}

QByteArray TestCa::certificatePem() const
{
    std::lock_guard lock(m_mutex);
    return m_ca.certificatePem();
}

std::shared_ptr<const pki::TlsLeaf> TestCa::leaf(const QString &name)
{
    std::lock_guard lock(m_mutex);
    auto leaf = m_ca.mintLeaf(name);
    return leaf ? *leaf : nullptr;
}

} // namespace airlock::test
