#include "ui/guestfilemodel.h"

#include "ui/guesttext.h"

#include <QApplication>
#include <QFileIconProvider>
#include <QJsonObject>
#include <QLocale>
#include <QStyle>

#include <algorithm>

namespace airlock {

GuestFileInfo GuestFileInfo::fromJson(const QJsonObject &info)
{
    GuestFileInfo entry;
    entry.name = info.value(QStringLiteral("name")).toString();
    const QString type = info.value(QStringLiteral("type")).toString();
    entry.type = type == u"file" ? Type::File
        : type == u"directory"   ? Type::Directory
        : type == u"symlink"     ? Type::Symlink
                                 : Type::Other;
    entry.mode = quint32(info.value(QStringLiteral("mode")).toInteger());
    entry.size = info.value(QStringLiteral("size")).toInteger();
    entry.mtimeNs = info.value(QStringLiteral("mtimeNs")).toInteger();
    entry.target = info.value(QStringLiteral("target")).toString();
    return entry;
}

GuestFileModel::GuestFileModel(QObject *parent) : QAbstractTableModel(parent) { }

void GuestFileModel::setEntries(const QJsonArray &entries, bool truncated)
{
    beginResetModel();
    m_entries.clear();
    m_entries.reserve(entries.size());
    for (const QJsonValue &value : entries) {
        GuestFileInfo entry = GuestFileInfo::fromJson(value.toObject());
        // depth 1 names no '/'; anything else would be a confused or hostile agent.
        if (entry.name.isEmpty() || entry.name.contains(u'/') || entry.name == u"."
            || entry.name == u"..")
            continue;
        m_entries.append(entry);
    }
    std::sort(m_entries.begin(), m_entries.end(),
              [](const GuestFileInfo &a, const GuestFileInfo &b) {
                  if (a.isDirectory() != b.isDirectory())
                      return a.isDirectory();
                  return QString::localeAwareCompare(a.name, b.name) < 0;
              });
    m_truncated = truncated;
    endResetModel();
}

void GuestFileModel::clear()
{
    beginResetModel();
    m_entries.clear();
    m_truncated = false;
    endResetModel();
}

const GuestFileInfo *GuestFileModel::entryAt(int row) const
{
    return row >= 0 && row < m_entries.size() ? &m_entries.at(row) : nullptr;
}

int GuestFileModel::rowOf(const QString &name) const
{
    for (int row = 0; row < m_entries.size(); ++row)
        if (m_entries.at(row).name == name)
            return row;
    return -1;
}

QString GuestFileModel::modeText(quint32 mode)
{
    QString text;
    const char letters[] = "rwx";
    for (int bit = 8; bit >= 0; --bit)
        text.append((mode & (1u << bit)) ? QChar(QLatin1Char(letters[(8 - bit) % 3]))
                                         : QChar(u'-'));
    return text;
}

QString GuestFileModel::typeText(GuestFileInfo::Type type)
{
    switch (type) {
    case GuestFileInfo::Type::File:
        return tr("File");
    case GuestFileInfo::Type::Directory:
        return tr("Folder");
    case GuestFileInfo::Type::Symlink:
        return tr("Link");
    case GuestFileInfo::Type::Other:
        break;
    }
    return tr("Other");
}

int GuestFileModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

int GuestFileModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant GuestFileModel::data(const QModelIndex &index, int role) const
{
    const GuestFileInfo *entry = entryAt(index.row());
    if (!entry)
        return {};
    if (role == Qt::DecorationRole && index.column() == NameColumn) {
        QFileIconProvider icons;
        return icons.icon(entry->isDirectory() ? QFileIconProvider::Folder
                                               : QFileIconProvider::File);
    }
    if (role == Qt::TextAlignmentRole && index.column() == SizeColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && entry->type == GuestFileInfo::Type::Symlink)
        return GuestText::shown(tr("Link to %1").arg(entry->target));
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case NameColumn:
        return GuestText::shown(entry->type == GuestFileInfo::Type::Symlink
                                    ? tr("%1 → %2").arg(entry->name, entry->target)
                                    : entry->name);
    case TypeColumn:
        return typeText(entry->type);
    case SizeColumn:
        return entry->isDirectory() ? QString() : QLocale().formattedDataSize(entry->size);
    case ModeColumn:
        return modeText(entry->mode);
    case ModifiedColumn:
        return QLocale().toString(
            QDateTime::fromMSecsSinceEpoch(entry->mtimeNs / 1000000).toLocalTime(),
            QLocale::ShortFormat);
    default:
        break;
    }
    return {};
}

QVariant GuestFileModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Name");
    case TypeColumn:
        return tr("Type");
    case SizeColumn:
        return tr("Size");
    case ModeColumn:
        return tr("Mode");
    case ModifiedColumn:
        return tr("Modified");
    default:
        break;
    }
    return {};
}

} // namespace airlock
