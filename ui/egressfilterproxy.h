#pragma once

#include <QSortFilterProxyModel>

namespace airlock {

/// Filters an EgressEventModel by sandbox, verdict and a case-insensitive text found in any
/// shown field (name, SNI, Host, method, path, reason, detail).
class EgressFilterProxy final : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    enum class Verdict { Any, Allowed, Denied };

    explicit EgressFilterProxy(QObject *parent = nullptr);

    /// Empty: every sandbox.
    void setSandbox(const QString &sandbox);
    void setVerdict(Verdict verdict);
    void setText(const QString &text);
    QString sandbox() const { return m_sandbox; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_sandbox;
    Verdict m_verdict = Verdict::Any;
    QString m_text;
};

} // namespace airlock
