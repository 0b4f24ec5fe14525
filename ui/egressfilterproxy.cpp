#include "ui/egressfilterproxy.h"

#include "ui/egresseventmodel.h"

namespace airlock {

EgressFilterProxy::EgressFilterProxy(QObject *parent) : QSortFilterProxyModel(parent) { }

void EgressFilterProxy::setSandbox(const QString &sandbox)
{
    m_sandbox = sandbox;
    invalidateRowsFilter();
}

void EgressFilterProxy::setVerdict(Verdict verdict)
{
    m_verdict = verdict;
    invalidateRowsFilter();
}

void EgressFilterProxy::setText(const QString &text)
{
    m_text = text.trimmed();
    invalidateRowsFilter();
}

bool EgressFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    if (!m_sandbox.isEmpty() && index.data(EgressEventModel::SandboxRole).toString() != m_sandbox)
        return false;
    if (m_verdict != Verdict::Any
        && index.data(EgressEventModel::AllowedRole).toBool() != (m_verdict == Verdict::Allowed))
        return false;
    if (!m_text.isEmpty()
        && !index.data(EgressEventModel::SearchTextRole)
                .toString()
                .contains(m_text, Qt::CaseInsensitive))
        return false;
    return true;
}

} // namespace airlock
